//! A worker thread on a compute blade: acquire, the critical section
//! (read the region; a writer writes it), release — one lock at a time.

use super::messages::{Line, Msg, LOCAL};
use super::protocol::{Gcs, Ghost};
use crate::agents::protocol::{Ctx, OpKind, Violation};
use crate::programs::Value;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum St {
    #[default]
    Idle,
    /// Asked its blade for the lock.
    Wait,
    /// Inside the critical section.
    Cs,
    /// Released; waiting for its blade to take the release.
    Rel,
}

/// (Debug: `text.rs`.)
#[derive(Clone, PartialEq, Eq, Hash, Default)]
pub struct Thread {
    pub st: St,
    pub line: Line,
    pub write: bool,
    /// Timing: acquisitions so far (the operation's id).
    pub ops: u32,
}

impl Gcs {
    pub(super) fn acquire(&self, t: &mut Thread, ctx: &mut Ctx<Msg, Ghost>, line: Line, write: bool) {
        t.st = St::Wait;
        t.line = line;
        t.write = write;
        ctx.issued(t.ops as u64, if write { OpKind::Store } else { OpKind::Load });
        ctx.send(self.blade_of(ctx.me), LOCAL, Msg::Acquire { line, write });
    }

    /// The end of the critical section: a writer's new value goes with it.
    pub(super) fn release(&self, t: &mut Thread, ctx: &mut Ctx<Msg, Ghost>) {
        t.st = St::Rel;
        let val = ctx.me as Value + 1;
        if t.write {
            if let Some(last) = ctx.ghost.last.get_mut(t.line as usize) {
                *last = val;
            }
        }
        ctx.send(self.blade_of(ctx.me), LOCAL, Msg::Release { line: t.line, write: t.write, val });
    }

    pub(super) fn thread_message(&self, t: &mut Thread, ctx: &mut Ctx<Msg, Ghost>, msg: Msg) -> Result<(), Violation> {
        match (t.st, msg) {
            (St::Wait, Msg::Granted { line, val }) if line == t.line => {
                // the region as the last writer left it (combined data or the page)
                if let Some(&last) = ctx.ghost.last.get(line as usize) {
                    if val != last {
                        return Err(Violation {
                            kind: "stale region",
                            detail: format!("lock {line} granted with {val}, its last writer released {last}"),
                        });
                    }
                }
                t.st = St::Cs;
                ctx.done(t.ops as u64);
                // timing only: a checked state must not count its laps
                if ctx.ops.is_some() {
                    t.ops = t.ops.wrapping_add(1);
                }
            }
            (St::Rel, Msg::Released { line }) if line == t.line => t.st = St::Idle,
            _ => return Err(Violation::unexpected(t.st, msg)),
        }
        Ok(())
    }
}
