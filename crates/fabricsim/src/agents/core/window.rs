//! The out-of-order window: the dispatch clock (width instructions per
//! cycle) and the reorder buffer's memory operations in program order.

use std::collections::VecDeque;

use super::{Entry, Kind, State};
use crate::engine::Time;

/// Where dispatch stands: the start of the current dispatch cycle and the
/// slots already used in it (fewer than the width).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct Clock {
    pub cyc: Time,
    pub used: u32,
}

impl Clock {
    /// Nothing dispatches before `t`: a later `t` starts a new cycle there.
    pub fn start(&mut self, t: Time) {
        if t > self.cyc {
            self.cyc = t;
            self.used = 0;
        }
    }

    /// Dispatch `n` (>= 1) instructions; returns the last one's cycle.
    pub fn take(&mut self, n: u64, width: u32, cycle: Time) -> Time {
        let w = u64::from(width);
        let total = u64::from(self.used) + n;
        let last = self.cyc + (total - 1) / w * cycle;
        self.cyc += total / w * cycle;
        self.used = (total % w) as u32;
        last
    }

    /// The end of the last cycle that dispatched anything.
    pub fn end(&self, cycle: Time) -> Time {
        if self.used > 0 {
            self.cyc + cycle
        } else {
            self.cyc
        }
    }
}

/// The reorder buffer's memory operations (loads, RMWs, mfences) in
/// program order; other instructions are only counted (`seq`).
pub(super) type Window<T> = VecDeque<Entry<T>>;

/// When the window's entries up to `i` have all retired (retirement is in
/// order), or None while one of them has not completed.
pub(super) fn retired_by<T>(w: &Window<T>, i: usize) -> Option<Time> {
    let mut t = 0;
    for e in w.iter().take(i + 1) {
        match e.state {
            State::Done(d) => t = t.max(d),
            _ => return None,
        }
    }
    Some(t)
}

/// Loads and RMWs in the window (load queue entries in use), and the index
/// of the oldest.
pub(super) fn loads<T>(w: &Window<T>) -> (u32, Option<usize>) {
    let mut n = 0;
    let mut first = None;
    for (i, e) in w.iter().enumerate() {
        if matches!(e.kind, Kind::Load | Kind::Rmw) {
            n += 1;
            first.get_or_insert(i);
        }
    }
    (n, first)
}
