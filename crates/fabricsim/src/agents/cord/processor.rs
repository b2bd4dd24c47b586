//! CORD's processor (Algorithm 1) and the SO / MP write-through cores:
//! how each store, Release and fence leaves the core, and the acks.

use smallvec::SmallVec;

use super::messages::{Loc, Msg, Num, Write, NOTI, REL, WT};
use super::protocol::{Cord, GStore, Ghost};
use super::{Mutant, Variant};
use crate::agents::coherence::core::Core;
use crate::agents::core::store_buffer::{self, Class, StoreBuffer};
use crate::agents::protocol::Ctx;
use crate::engine::Time;

/// No program operation waits for this.
pub const NO_OP: u8 = u8::MAX;

/// A Release sent and not yet acked.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Unacked {
    pub ep: Num,
    /// Its directory (index among the directories).
    pub dst: u8,
    /// The line it writes (None: an empty Release).
    pub loc: Option<Loc>,
    /// Directories that hold a store counter of this epoch (its Relaxed
    /// stores' directories and its own): the directory-table bound.
    pub touched: u64,
    /// The program operation that completes with its ack, or `NO_OP`.
    pub op: u8,
    /// Its epoch equals, modulo 2^bits, the last epoch released to the same
    /// directory before it: that directory's largest committed epoch cannot
    /// tell them apart until it commits.
    pub alias: bool,
}

/// A store waiting in the timed core's store buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Buffered {
    pub loc: Loc,
    pub release: bool,
    pub bytes: u32,
    pub id: u64,
}

/// A load of a buffered location completes at once (the timed core carries no values).
impl store_buffer::Buffered for Buffered {
    type Loc = Loc;
    type Value = ();
    fn store(&self) -> Option<(Loc, ())> {
        Some((self.loc, ()))
    }
    fn class(&self) -> Class {
        if self.release {
            Class::Release
        } else {
            Class::Store
        }
    }
}

/// A processor core (Debug: `text.rs`).
#[derive(Clone, PartialEq, Eq, Hash, Default)]
pub struct Proc {
    /// A litmus program's front end (unused when free or timed).
    pub core: Core,
    /// CORD: the current epoch.
    pub ep: Num,
    /// CORD: Relaxed stores per directory in the current epoch (sorted).
    pub counters: SmallVec<[(u8, Num); 2]>,
    /// Releases not yet acked, oldest first.
    pub unacked: SmallVec<[Unacked; 2]>,
    /// CORD: per directory (sorted), the epoch last released there.
    pub last_rel: SmallVec<[(u8, Num); 2]>,
    /// SO: Relaxed stores not yet acked.
    pub acks: u16,
    /// SEQ-n: sequence numbers used since the numbering last restarted.
    pub seq: u64,
    /// Timed: loads outstanding (line, operation id) and whether one is an
    /// acquire (nothing later issues until it returns).
    pub loads: SmallVec<[(Loc, u64); 2]>,
    pub acquiring: bool,
    /// Timed: the store buffer, oldest first.
    pub sb: StoreBuffer<Buffered>,
    pub stats: ProcStats,
}

/// Counts and waiting times of a timed run (zero when checking).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct ProcStats {
    pub next_id: u64,
    /// Since when the store buffer's head waits, and why (true: for acks).
    pub blocked_since: Option<(Time, bool)>,
    /// Time the head of the store buffer waited for write-through acks (SO)
    /// and for CORD's tables.
    pub ack_wait: Time,
    pub table_wait: Time,
    pub releases: u64,
    pub splits: u64,
    pub req_notis: u64,
    pub unacked_high: u32,
    pub counters_high: u32,
}

impl Proc {
    pub fn counter(&self, d: u8) -> Num {
        self.counters.iter().find(|c| c.0 == d).map_or(0, |c| c.1)
    }

    /// Algorithm 1's lastPrevEp for directory `d`: the epoch of the last
    /// Release sent to `d` if it is still unacked. (If it was acked, every
    /// earlier Release to `d` committed, even one whose ack is still on its
    /// way: `d` commits them in order.)
    pub fn prev(&self, d: u8) -> Option<Num> {
        let e = self.last_rel.iter().find(|e| e.0 == d)?.1;
        self.unacked.iter().any(|u| u.dst == d && u.ep == e).then_some(e)
    }

    /// An unacked Release writes `loc`: this core's later loads and Relaxed stores to it wait.
    pub fn line_blocked(&self, loc: Loc) -> bool {
        self.unacked.iter().any(|u| u.loc == Some(loc))
    }

    /// Work in flight (for deadlock detection).
    pub fn busy(&self) -> bool {
        !self.unacked.is_empty() || self.acks > 0 || !self.loads.is_empty() || !self.sb.is_empty()
    }
}

impl Cord {
    /// Directories that must notify a Release to `dst` (None: a barrier):
    /// a Relaxed store this epoch, or an unacked Release.
    pub(super) fn pending(&self, p: &Proc, dst: Option<u8>) -> u64 {
        let mut m = 0u64;
        for &(d, _) in &p.counters {
            m |= 1 << d;
        }
        if !self.is(Mutant::NotiLost) {
            for u in &p.unacked {
                m |= 1 << u.dst;
            }
        }
        if let Some(d) = dst {
            m &= !(1 << d);
        }
        m
    }

    /// CORD: may a Release to `dst` leave now, or must it stall (§4.3)?
    pub(super) fn release_blocked(&self, p: &Proc, dst: u8) -> bool {
        if p.unacked.len() >= self.params.proc_unacked {
            return true;
        }
        if !self.is(Mutant::EpochNoWrap) {
            // wraparound: the next epoch's number must not be a live
            // (unacked) one's; acks come back in any order, so a full table
            // is not the only way to run into one
            let next = ((p.ep as u64 + 1) % self.params.epochs()) as Num;
            if p.unacked.iter().any(|u| u.alias || u.ep == next || u.ep == p.ep) {
                return true;
            }
        }
        if self.is(Mutant::NoTableStall) {
            return false;
        }
        p.unacked.iter().filter(|u| u.dst == dst).count() >= self.params.dir_notis
    }

    /// CORD: whether directory `d` has room for a new store counter of
    /// this core, when its unacked epochs (and `extra` more about to be)
    /// may each hold one there.
    pub(super) fn counter_room(&self, p: &Proc, d: u8, extra: usize) -> bool {
        self.is(Mutant::NoTableStall)
            || p.unacked.iter().filter(|u| u.touched >> d & 1 == 1).count() + extra < self.params.dir_counters
    }

    /// CORD: a Relaxed store to `d` must first close the epoch (the store
    /// counter table is full or `d`'s counter would wrap).
    pub(super) fn needs_split(&self, p: &Proc, d: u8) -> bool {
        match p.counters.iter().find(|c| c.0 == d) {
            Some(c) => c.1 as u64 + 1 >= self.params.counts(),
            None => p.counters.len() >= self.params.proc_counters,
        }
    }

    /// SEQ-n: the next store takes the last sequence number, so it goes as
    /// a Release, whose ack shows every earlier store ordered.
    fn seq_drains(&self, p: &Proc) -> bool {
        self.variant == Variant::Cord && self.params.seq_bits > 0 && p.seq + 1 >= self.params.seq_numbers()
    }

    /// Whether a store to `loc` (Release or not) may leave now.
    pub(super) fn store_ready(&self, p: &Proc, loc: Loc, release: bool) -> bool {
        let release = release || self.seq_drains(p);
        // A directory-ordered store (a CORD Release, every CORD store under
        // TSO) to a line with an unacked Release of this core may go: the
        // line's directory commits it after that Release (its lastPrevEp
        // chain). A Relaxed store would commit at once, so it waits.
        let ordered = self.variant == Variant::Cord && (release || self.tso);
        if p.line_blocked(loc) && !ordered {
            return false;
        }
        if self.variant == Variant::Cord && self.params.seq_bits > 0 && p.seq >= self.params.seq_numbers() {
            // SEQ-n: out of numbers until the draining Release is acked
            return false;
        }
        let d = self.home(loc);
        match self.variant {
            Variant::Mp => true,
            // source ordering: a Release (under TSO every store) after every earlier store's ack
            Variant::So => !(release || self.tso) || (p.acks == 0 && p.unacked.is_empty()),
            Variant::Cord if release || self.tso => !self.release_blocked(p, d),
            Variant::Cord if self.needs_split(p, d) => {
                // the split's Release touches `d` too, then the store takes a new counter there
                !self.release_blocked(p, d) && self.counter_room(p, d, 1)
            }
            Variant::Cord => p.counters.iter().any(|c| c.0 == d) || self.counter_room(p, d, 0),
        }
    }

    /// Send a store to `loc` (the caller checked `store_ready`); `op` is
    /// the program operation its ack completes, if any. Returns whether the
    /// store is done for the front end (no ack awaited).
    pub(super) fn send_store(&self, p: &mut Proc, ctx: &mut Ctx<Msg, Ghost>, w: Write, release: bool, op: u8) -> bool {
        let d = self.home(w.loc);
        let release = release || self.seq_drains(p);
        if self.variant == Variant::Cord && self.params.seq_bits > 0 {
            p.seq += 1;
        }
        let to = self.dir_agent(d);
        match self.variant {
            Variant::Mp => {
                self.ghost_issue(ctx, GStore::Rlx { dir: d, loc: w.loc });
                ctx.send(to, WT, Msg::RlxST { w, ep: 0, acked: false, op: NO_OP });
                true
            }
            Variant::So if release => {
                self.ghost_issue(ctx, GStore::Rel { dir: d, ep: 0 });
                p.unacked.push(Unacked { ep: 0, dst: d, loc: Some(w.loc), touched: 0, op, alias: false });
                ctx.send(to, REL, Msg::RelST { w: Some(w), ep: 0, cnt: 0, prev: None, noti: 0 });
                false
            }
            Variant::So => {
                self.ghost_issue(ctx, GStore::Rlx { dir: d, loc: w.loc });
                p.acks += 1;
                ctx.send(to, WT, Msg::RlxST { w, ep: 0, acked: true, op });
                false
            }
            Variant::Cord if release || self.tso => {
                self.send_release(p, ctx, Some(w), d, op);
                op == NO_OP
            }
            Variant::Cord => {
                if self.needs_split(p, d) {
                    self.send_release(p, ctx, None, d, NO_OP);
                    p.stats.splits += self.driven as u64;
                }
                self.ghost_issue(ctx, GStore::Rlx { dir: d, loc: w.loc });
                match p.counters.iter_mut().find(|c| c.0 == d) {
                    Some(c) => c.1 += 1,
                    None => {
                        let i = p.counters.partition_point(|c| c.0 < d);
                        p.counters.insert(i, (d, 1));
                    }
                }
                if self.driven {
                    p.stats.counters_high = p.stats.counters_high.max(p.counters.len() as u32);
                }
                ctx.send(to, WT, Msg::RlxST { w, ep: p.ep, acked: false, op: NO_OP });
                true
            }
        }
    }

    /// CORD's Release (Algorithm 1, lines 5-13): to directory `dst`, writing
    /// `w` or nothing (a barrier or an epoch split).
    pub(super) fn send_release(&self, p: &mut Proc, ctx: &mut Ctx<Msg, Ghost>, w: Option<Write>, dst: u8, op: u8) {
        let ep = p.ep;
        let pending = self.pending(p, Some(dst));
        let mut m = pending;
        while m != 0 {
            let d = m.trailing_zeros() as u8;
            m &= m - 1;
            let req = Msg::ReqNoti { ep, cnt: p.counter(d), prev: p.prev(d), dst };
            ctx.send(self.dir_agent(d), NOTI, req);
            p.stats.req_notis += self.driven as u64;
        }
        let rel = Msg::RelST { w, ep, cnt: p.counter(dst), prev: p.prev(dst), noti: pending.count_ones() as u8 };
        self.ghost_issue(ctx, GStore::Rel { dir: dst, ep });
        let last = p.last_rel.iter().find(|e| e.0 == dst).map(|e| e.1);
        let alias = p.prev(dst).is_none() && last == Some(ep);
        let mut touched = 1u64 << dst;
        for &(d, _) in &p.counters {
            touched |= 1 << d;
        }
        p.unacked.push(Unacked { ep, dst, loc: w.map(|w| w.loc), touched, op, alias });
        match p.last_rel.iter_mut().find(|e| e.0 == dst) {
            Some(e) => e.1 = ep,
            None => {
                let i = p.last_rel.partition_point(|e| e.0 < dst);
                p.last_rel.insert(i, (dst, ep));
            }
        }
        ctx.send(self.dir_agent(dst), REL, rel);
        p.ep = ((ep as u64 + 1) % self.params.epochs()) as Num;
        p.counters.clear();
        if self.driven {
            p.stats.releases += 1;
            p.stats.unacked_high = p.stats.unacked_high.max(p.unacked.len() as u32);
        }
    }

    /// A release or SC fence: CORD sends one empty Release to the lowest
    /// pending directory (done at its ack; at once if nothing is pending).
    /// Returns whether the fence is done. SO's and MP's fences wait in the
    /// front end only.
    pub(super) fn fence(&self, p: &mut Proc, ctx: &mut Ctx<Msg, Ghost>, op: u8) -> bool {
        if self.variant != Variant::Cord {
            return true;
        }
        let pending = self.pending(p, None);
        if pending == 0 {
            return true;
        }
        self.send_release(p, ctx, None, pending.trailing_zeros() as u8, op);
        false
    }

    /// Whether a fence may start now (CORD: its barrier Release can leave;
    /// SO: every store acked).
    pub(super) fn fence_ready(&self, p: &Proc) -> bool {
        match self.variant {
            Variant::Mp => true,
            Variant::So => p.acks == 0 && p.unacked.is_empty(),
            Variant::Cord => {
                let pending = self.pending(p, None);
                pending == 0 || !self.release_blocked(p, pending.trailing_zeros() as u8)
            }
        }
    }

    /// A RelAck: free the unacked entry; the program operation it
    /// completes (or `NO_OP`); None if no such Release is unacked.
    pub(super) fn on_rel_ack(&self, p: &mut Proc, ep: Num) -> Option<u8> {
        let i = p.unacked.iter().position(|u| u.ep == ep)?;
        let op = p.unacked.remove(i).op;
        if self.params.seq_bits > 0 && p.seq >= self.params.seq_numbers() && p.unacked.is_empty() {
            p.seq = 0;
        }
        Some(op)
    }
}
