//! Stopping a long exploration from outside (Ctrl-C): the explorer and the
//! memory-model oracle poll a [`Stop`] every few thousand states and, when
//! it says so, return what they explored so far marked incomplete.

use std::fmt;
use std::sync::Arc;

/// A request to stop, polled by long searches. The default never stops.
#[derive(Clone, Default)]
pub struct Stop(Option<Arc<dyn Fn() -> bool + Send + Sync>>);

impl Stop {
    /// Stop when `f` returns true (it should be cheap; it is called about
    /// every thousand states).
    pub fn new(f: impl Fn() -> bool + Send + Sync + 'static) -> Stop {
        Stop(Some(Arc::new(f)))
    }

    pub fn requested(&self) -> bool {
        self.0.as_ref().is_some_and(|f| f())
    }
}

impl fmt::Debug for Stop {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(if self.0.is_some() { "Stop(polled)" } else { "Stop(never)" })
    }
}
