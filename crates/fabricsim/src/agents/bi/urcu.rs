//! BI Table 1's baseline (§7.2): the same BONSAI tree on the **coherent**
//! machine under a userspace RCU (liburcu-like), every core a thread that
//! looks keys up and updates the tree itself.
//!
//! - `rcu_read_lock`: load the global grace-period counter `gp`, store it
//!   in the thread's own counter line, mfence; `rcu_read_unlock`: mfence,
//!   store 0 (liburcu's "memb" flavour without `sys_membarrier`).
//! - A lookup walks the tree with plain loads (key, then the child pointer).
//! - An update takes the writer lock (test-and-test-and-set with `pause`
//!   between polls), path-copies on the authoritative tree (stores of each
//!   new node's words, then the root), releases the lock, and waits for a
//!   grace period (`synchronize_rcu`): under the grace-period lock, bump
//!   `gp`, mfence, then poll every other thread's counter until it is 0 or
//!   at least the new `gp`; then the replaced nodes go back to the allocator.
//!
//! Modelling choices (not in the paper): the lock is a spinlock (BONSAI's
//! writers take "a lock"), `pause` costs 140 cycles (Skylake's PAUSE, Intel
//! Optimization Manual §2.5.4), concurrent grace periods are not batched
//! (liburcu's batching of waiters is not modelled), and readers fence
//! (liburcu's memb flavour falls back to fences without `sys_membarrier`).

use std::collections::VecDeque;

use super::program::{Next, World};
use super::runtime::{ptr_obj, ptr_word, MicroOp, Word, PAYLOAD};
use super::tree::{Bounds, Tally, ROOT};
use crate::engine::{Time, NS};
use crate::workloads::bonsai::{PathCopy, COLOR_WORD, KEY_WORD, LEFT_WORD, RIGHT_WORD};

/// The global grace-period counter, the writer lock and the grace-period lock.
pub const GP: u64 = 1;
pub const LOCK: u64 = 2;
pub const GP_LOCK: u64 = 3;
/// Thread `i`'s reader counter is line `CTR + i`.
pub const CTR: u64 = 4;
/// Skylake's PAUSE: 140 cycles of the core's clock (56 ns at 2.5 GHz).
pub const PAUSE: Time = 140 * super::CYCLE;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum UState {
    Idle,
    LockGp,
    LockCtr,
    LockFence,
    /// A child (or the root) pointer was loaded.
    Ptr,
    Key {
        obj: u32,
    },
    UnlockFence,
    UnlockCtr,
    /// An exchange on `lock` was issued; a poll of it; a pause before the next poll.
    Acquire {
        lock: u64,
    },
    Spin {
        lock: u64,
    },
    Pause {
        lock: u64,
    },
    Copy,
    Release,
    GpLoad,
    GpStore,
    GpFence,
    Scan,
    ScanPause,
    GpRelease,
    Stopped,
}

/// One U-RCU thread.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Urcu {
    pub st: UState,
    pub me: u32,
    pub threads: u32,
    pub key: u64,
    pub insert: bool,
    pub t0: Time,
    pub rng: u64,
    pub key_range: u64,
    pub update_share: u64,
    pub warmup: Time,
    pub end: Time,
    pub obj_base: u64,
    /// The grace period this thread's `synchronize_rcu` waits for.
    pub gp: Word,
    /// The thread whose counter is polled.
    pub scan: u32,
    pub todo: VecDeque<MicroOp>,
    pub freed: Vec<u32>,
    pub bounds: Bounds,
    pub tally: Tally,
}

impl Urcu {
    fn obj_line(&self, o: u32) -> u64 {
        self.obj_base + o as u64
    }

    fn measured(&self, now: Time) -> bool {
        self.t0 >= self.warmup && now <= self.end
    }

    fn op(&mut self, st: UState, op: MicroOp) -> Next {
        self.st = st;
        Next::Op(op)
    }

    /// Poll the next thread's counter, or end the grace period.
    fn scan_next(&mut self) -> Next {
        if self.scan == self.me {
            self.scan += 1;
        }
        if self.scan >= self.threads {
            return self.op(UState::GpRelease, MicroOp::Store { line: GP_LOCK, word: 0, val: 0 });
        }
        self.op(UState::Scan, MicroOp::Load { line: CTR + self.scan as u64, word: 0 })
    }

    /// The next step, given the word the last micro-op loaded or replaced.
    pub fn next(&mut self, ret: Option<Word>, now: Time, world: &mut World) -> Next {
        let v = ret.unwrap_or(0);
        let pause = MicroOp::Compute { ns: PAUSE / NS };
        match self.st {
            UState::LockGp => {
                return self.op(UState::LockCtr, MicroOp::Store { line: CTR + self.me as u64, word: 0, val: v })
            }
            UState::LockCtr => return self.op(UState::LockFence, MicroOp::Mfence),
            UState::LockFence => return self.op(UState::Ptr, MicroOp::Load { line: ROOT, word: 0 }),
            UState::Ptr => {
                return match ptr_obj(v) {
                    Some(obj) => {
                        let line = self.obj_line(obj);
                        self.op(UState::Key { obj }, MicroOp::Load { line, word: PAYLOAD + KEY_WORD as u8 })
                    }
                    None => self.op(UState::UnlockFence, MicroOp::Mfence),
                }
            }
            UState::Key { obj } => {
                if !self.bounds.visit(self.key, v) {
                    self.tally.order_violations += 1;
                    return self.op(UState::UnlockFence, MicroOp::Mfence);
                }
                if v == self.key {
                    return self.op(UState::UnlockFence, MicroOp::Mfence);
                }
                let word = PAYLOAD + if self.key < v { LEFT_WORD } else { RIGHT_WORD } as u8;
                let line = self.obj_line(obj);
                return self.op(UState::Ptr, MicroOp::Load { line, word });
            }
            UState::UnlockFence => {
                return self.op(UState::UnlockCtr, MicroOp::Store { line: CTR + self.me as u64, word: 0, val: 0 })
            }
            UState::UnlockCtr => {
                if self.measured(now) {
                    self.tally.reads += 1;
                    self.tally.read_ps += now - self.t0;
                }
            }
            UState::Acquire { lock } if v != 0 => return self.op(UState::Pause { lock }, pause),
            UState::Acquire { lock: GP_LOCK } => return self.op(UState::GpLoad, MicroOp::Load { line: GP, word: 0 }),
            UState::Acquire { .. } => {
                let tree = world.tree.as_mut().expect("the tree's world");
                match tree.apply(self.key, self.insert) {
                    Some(PathCopy { new_nodes, freed, new_root }) => {
                        for (obj, n) in new_nodes {
                            let line = self.obj_line(obj);
                            let w = super::tree::node_line(&n);
                            for k in [KEY_WORD, LEFT_WORD, RIGHT_WORD, COLOR_WORD] {
                                let word = PAYLOAD + k as u8;
                                self.todo.push_back(MicroOp::Store { line, word, val: w[word as usize] });
                            }
                        }
                        self.todo.push_back(MicroOp::Store {
                            line: ROOT,
                            word: 0,
                            val: new_root.map_or(0, |o| ptr_word(o, 0)),
                        });
                        self.freed = freed;
                        self.st = UState::Copy;
                    }
                    None => return self.op(UState::Release, MicroOp::Store { line: LOCK, word: 0, val: 0 }),
                }
                return self.next(None, now, world);
            }
            UState::Pause { lock } => return self.op(UState::Spin { lock }, MicroOp::Load { line: lock, word: 0 }),
            UState::Spin { lock } if v != 0 => return self.op(UState::Pause { lock }, pause),
            UState::Spin { lock } => {
                return self.op(UState::Acquire { lock }, MicroOp::Swap { line: lock, word: 0, val: 1 })
            }
            UState::Copy => {
                return match self.todo.pop_front() {
                    Some(op) => Next::Op(op),
                    None => self.op(UState::Release, MicroOp::Store { line: LOCK, word: 0, val: 0 }),
                }
            }
            UState::Release if !self.freed.is_empty() => {
                return self.op(UState::Acquire { lock: GP_LOCK }, MicroOp::Swap { line: GP_LOCK, word: 0, val: 1 })
            }
            UState::GpLoad => {
                self.gp = v + 1;
                return self.op(UState::GpStore, MicroOp::Store { line: GP, word: 0, val: self.gp });
            }
            UState::GpStore => return self.op(UState::GpFence, MicroOp::Mfence),
            UState::GpFence => {
                self.scan = 0;
                return self.scan_next();
            }
            // a thread inside a read section it began before the new grace period
            UState::Scan if v != 0 && v < self.gp => return self.op(UState::ScanPause, pause),
            UState::Scan => {
                self.scan += 1;
                return self.scan_next();
            }
            UState::ScanPause => return self.op(UState::Scan, MicroOp::Load { line: CTR + self.scan as u64, word: 0 }),
            UState::GpRelease | UState::Release => {
                let tree = world.tree.as_mut().expect("the tree's world");
                tree.free.append(&mut self.freed);
                if self.measured(now) {
                    self.tally.writes += 1;
                    self.tally.write_ps += now - self.t0;
                }
            }
            UState::Idle => {}
            UState::Stopped => return Next::Stop,
        }
        // between operations
        self.t0 = now;
        if now >= self.end {
            self.st = UState::Stopped;
            return Next::Stop;
        }
        let (key, update) = super::tree::draw(&mut self.rng, self.key_range, self.update_share);
        self.key = key;
        if let Some(insert) = update {
            self.insert = insert;
            return self.op(UState::Acquire { lock: LOCK }, MicroOp::Swap { line: LOCK, word: 0, val: 1 });
        }
        self.bounds = Bounds::default();
        self.op(UState::LockGp, MicroOp::Load { line: GP, word: 0 })
    }
}
