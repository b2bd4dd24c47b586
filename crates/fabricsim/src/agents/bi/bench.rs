//! The micro-benchmarks of BI Figs 3, 11 and 12 (`[protocol.bi.bench]`),
//! run by domain 0's first core: the next action and the run's phases.

use super::protocol::{Action, Bi, Core, Phase, Run, Val, Wait};
use super::{Bench, FlushMode, FlushOp, LineState};
use crate::engine::Time;

impl Bi {
    pub(super) fn next_random(r: &mut u64) -> u64 {
        crate::engine::rng::xorshift64star(r)
    }

    /// The benchmark's next action for core `c`, if it may go now.
    pub(super) fn bench_next(&self, c: &Core) -> Option<Action> {
        let b = self.bench?;
        let r = &c.run;
        match (b, r.phase) {
            (_, Phase::Done) => None,
            (Bench::Read { flush, .. }, _) => {
                let line = self.bench_line(r.cur);
                if flush && !r.flushed {
                    self.may_flush(c, line, FlushOp::Clflush).then_some(Action::Flush { line, op: FlushOp::Clflush })
                } else {
                    self.may_access(c, line, false).then(|| Action::Load { line, level: self.level(c, line) })
                }
            }
            (Bench::Flush { op, state, .. }, phase) => {
                let line = self.bench_line(r.i);
                match phase {
                    Phase::Prep => match state {
                        LineState::Read => {
                            self.may_access(c, line, false).then(|| Action::Load { line, level: self.level(c, line) })
                        }
                        LineState::Modified => self.may_access(c, line, true).then(|| Action::Store {
                            line,
                            val: 1 + r.rep as Val,
                            level: self.level(c, line),
                        }),
                        LineState::Invalid => self
                            .may_flush(c, line, FlushOp::Clflush)
                            .then_some(Action::Flush { line, op: FlushOp::Clflush }),
                    },
                    Phase::Measure => self.may_flush(c, line, op).then_some(Action::Flush { line, op }),
                    Phase::Reread => {
                        self.may_access(c, line, false).then(|| Action::Load { line, level: self.level(c, line) })
                    }
                    _ => (c.wait == Wait::None && c.flushing.is_empty()).then_some(Action::Fence),
                }
            }
            (Bench::Periodic { mode, op, period, periods, settle, .. }, phase) => {
                let end = period.saturating_mul(periods);
                let flush = |i: u64| {
                    let line = self.bench_line(i);
                    self.may_flush(c, line, op).then_some(Action::Flush { line, op })
                };
                match phase {
                    // an invalidation in progress finishes, even past the end
                    Phase::Flushing => flush(r.i),
                    Phase::AggrFlush => flush(r.prev),
                    Phase::FlushFence | Phase::AggrFence => {
                        // an mfence orders the loads in flight too
                        (c.wait == Wait::None && c.flushing.is_empty() && c.loads.is_empty()).then_some(Action::Fence)
                    }
                    _ if r.clock >= end => None,
                    Phase::Idle if r.clock >= r.next_flush => flush(0),
                    Phase::Idle => Some(Action::Wait { dur: r.next_flush.min(end) - r.clock }),
                    _ if mode == FlushMode::Same && r.clock >= r.next_flush => flush(0),
                    _ if settle > 0
                        && r.since_flush >= settle
                        && matches!(mode, FlushMode::Same | FlushMode::Other)
                        && r.clock < r.next_flush =>
                    {
                        // the refills are over: the rest of the period runs at the steady rate
                        Some(Action::Wait { dur: r.next_flush.min(end) - r.clock })
                    }
                    _ => {
                        let line = self.bench_line(r.cur);
                        self.may_access(c, line, false).then(|| Action::Load { line, level: self.level(c, line) })
                    }
                }
            }
        }
    }

    pub(super) fn bench_advance(&self, c: &mut Core, now: Time, action: Action) {
        let Some(b) = self.bench else { return };
        let r = &mut c.run;
        match b {
            Bench::Read { lines, ops, sequential, .. } => {
                if r.i == 0 && !r.flushed {
                    r.t0 = now;
                }
                if matches!(action, Action::Flush { .. }) {
                    r.flushed = true;
                    return;
                }
                r.flushed = false;
                r.i += 1;
                r.ops += 1;
                r.cur = if sequential { r.i % lines.max(1) } else { Self::next_random(&mut r.rng) % lines.max(1) };
                if r.i >= ops {
                    r.phase = Phase::Done;
                }
            }
            Bench::Periodic { lines, mode, period, skip, .. } => {
                // the first periods bring the caches to the periodic state; the rest are measured
                let measured = period.saturating_mul(skip);
                match action {
                    Action::Wait { dur } if now >= measured => r.idle += dur,
                    Action::Load { .. } => {
                        if mode == FlushMode::Other {
                            while now >= r.next_flush {
                                r.next_flush += period;
                                r.since_flush = 0;
                            }
                        }
                        r.ops += (now >= measured) as u64;
                        r.since_flush += 1;
                        r.prev = r.cur;
                        r.cur = Self::next_random(&mut r.rng) % lines.max(1);
                        if mode == FlushMode::Aggressive {
                            r.phase = Phase::AggrFlush;
                        }
                    }
                    Action::Flush { .. } => match r.phase {
                        Phase::AggrFlush => r.phase = Phase::AggrFence,
                        Phase::Flushing => {
                            r.i += 1;
                            if r.i >= lines {
                                r.phase = Phase::FlushFence;
                            }
                        }
                        _ => {
                            // an invalidation starts; the next is due a period after this one's start
                            r.flush_t0 = now;
                            r.next_flush += period;
                            r.since_flush = 0;
                            r.i = 1;
                            r.phase = if lines > 1 { Phase::Flushing } else { Phase::FlushFence };
                        }
                    },
                    Action::Fence if r.phase == Phase::AggrFence => r.phase = Phase::Load,
                    Action::Fence => {
                        if r.flush_t0 >= measured {
                            r.flush_total += now + self.params.fence - r.flush_t0;
                            r.flushes += 1;
                        }
                        r.phase = if mode == FlushMode::Other { Phase::Idle } else { Phase::Load };
                    }
                    _ => {}
                }
            }
            Bench::Flush { lines, reps, reread, .. } => match r.phase {
                Phase::Prep | Phase::Measure | Phase::Reread => {
                    if r.i == 0 {
                        r.t0 = now;
                    }
                    r.i += 1;
                    if r.i >= lines {
                        r.i = 0;
                        r.phase = match r.phase {
                            Phase::Prep => Phase::PrepFence,
                            Phase::Measure => Phase::MeasureFence,
                            _ => Phase::RereadFence,
                        };
                    }
                }
                Phase::PrepFence => r.phase = Phase::Measure,
                Phase::MeasureFence => {
                    r.total += now + self.params.fence - r.t0;
                    r.ops += lines;
                    r.phase = if reread { Phase::Reread } else { Self::next_rep(r, reps) };
                }
                Phase::RereadFence => {
                    r.reread += r.t_end.max(now) - r.t0;
                    r.phase = Self::next_rep(r, reps);
                }
                _ => {}
            },
        }
    }

    pub(super) fn next_rep(r: &mut Run, reps: u64) -> Phase {
        r.rep += 1;
        if r.rep >= reps {
            Phase::Done
        } else {
            Phase::Prep
        }
    }
}
