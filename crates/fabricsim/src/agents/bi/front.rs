//! A program core's front end (timing only): the shared out-of-order core
//! of every protocol's timed cores (`agents/core`, docs/core.md) decides
//! *when* each micro-op of the core's thread may go; BI's core
//! (`core.rs`, `program.rs`) still performs it on BI's caches.
//!
//! Each micro-op the thread emits is pushed to the front end at once, so
//! the `skylake-sp` preset's reorder buffer, dispatch width, load queue
//! and fill buffers govern a BI core as they do every other protocol's:
//!
//! - a load, an exchange (RMW) or an mfence is a window entry, issued when
//!   the front end lets it (an exchange and an mfence wait for every older
//!   entry, TSO) and reported as a hit of its latency or as a miss that
//!   holds a fill buffer until its data arrives;
//! - a store, clwb or clflushopt takes one of the front end's store-buffer
//!   entries (the preset's 56) at its dispatch and holds it until BI's
//!   buffer (`store_buffer.rs`, which performs it on BI's caches) has
//!   performed it ([`Front::performed`]): a full buffer stalls dispatch, as
//!   the machine's does. Without a store buffer (`buffered` false: a
//!   declared alternative) a store holds nothing past its dispatch and
//!   waits for its line in the thread instead;
//! - a computation of `ns` is `ns / cycle * width` instructions: `ns` when
//!   nothing else holds the window, longer when the reorder buffer fills
//!   behind an outstanding miss.
//!
//! The thread needs most loads' words for its next micro-op (the runtime
//! branches on them), so it emits the next one only when the word is
//! there: a dependent chain costs the sum of its latencies. A load whose
//! word the thread does not read (`Thread::uses_loaded`) lets the thread
//! go on once it issued: such misses overlap, up to the fill buffers.
//!
//! Every miss a BI core has in flight holds one of its fill buffers
//! ([`Bi::fill_free`]): a load's, an ownership request's (an exchange's,
//! an unbuffered store's, a buffered store's prefetch), a flush's. The
//! front end's own count covers only the misses of its window, so BI's
//! machine counts them all against the same preset value
//! (`[protocol.bi] fill_buffers`), for program and benchmark cores alike.
//!
//! The front end lives beside the checked state ([`Beside`]): it changes
//! no behaviour the checker explores (and the checked machine runs no
//! programs).

use std::collections::VecDeque;

use smallvec::SmallVec;

use super::protocol::{Bi, Core, Line, Wait};
use super::runtime::MicroOp;
use super::store_buffer::FILL_BUFFERS;
use crate::agents::cache::Beside;
use crate::agents::core::{self as front, Access, Next, OpId, Queues};
use crate::engine::{Time, NS};

/// A program core's front end and where its thread stands in it.
#[derive(Debug, Clone)]
pub struct Front {
    core: front::Core<()>,
    /// The core's time at its next step: its last action's time plus the
    /// time that action keeps it, or a later message's.
    pub now: Time,
    /// The current micro-op's kind in the front end, until it goes.
    cur: Option<front::Kind>,
    /// Its id, once dispatched (a computation has none).
    id: Option<OpId>,
    /// Whether the thread reads the current load's word.
    used: bool,
    /// When the current micro-op may go (None: not before a completion).
    ready: Option<Time>,
    /// The last micro-op issued as a miss whose word the thread waits for.
    out: Option<OpId>,
    /// Misses in flight whose word nobody waits for (at most the fill
    /// buffers: the preset's fit without allocating).
    misses: SmallVec<[(Line, OpId); FILL_BUFFERS]>,
    /// Stores retire into BI's store buffer (else each waits for its line).
    buffered: bool,
    /// The stores (and flushes) dispatched and not yet performed, oldest
    /// first: the front end's store-buffer entries BI's buffer holds.
    stores: VecDeque<OpId>,
}

/// A program core's front end, kept out of the checker's states.
pub type Side = Beside<Front>;

impl Default for Front {
    fn default() -> Self {
        Front::new(super::CORE.core, false)
    }
}

impl Front {
    /// A front end of `p`; `buffered`: stores retire into BI's buffer.
    pub fn new(p: front::Params, buffered: bool) -> Self {
        Front {
            core: front::Core::new(p).expect("the preset's (or a test's) parameters are valid"),
            now: 0,
            cur: None,
            id: None,
            used: true,
            ready: None,
            out: None,
            misses: SmallVec::new(),
            buffered,
            stores: VecDeque::with_capacity(if buffered { p.store_buffer as usize } else { 0 }),
        }
    }

    /// BI's store buffer performed its oldest entry at `at`: its
    /// store-buffer entry frees (a store waiting to dispatch may go).
    pub fn performed(&mut self, at: Time) {
        if let Some(id) = self.stores.pop_front() {
            self.core.issue(id, at, Some(0)).expect("a store the front end holds");
            self.at(at);
        }
    }

    /// The thread emitted `op`, to go no earlier than `at` (`used`: the
    /// thread reads a load's word).
    pub fn push(&mut self, op: MicroOp, used: bool, at: Time) {
        let p = *self.core.params();
        let (kind, gap) = match op {
            MicroOp::Load { .. } | MicroOp::Prefetch { .. } => (front::Kind::Load, 0),
            MicroOp::Swap { .. } => (front::Kind::Rmw, 0),
            MicroOp::Mfence => (front::Kind::Mfence, 0),
            MicroOp::Store { .. } | MicroOp::Clflushopt { .. } | MicroOp::Clwb { .. } => (front::Kind::Store, 0),
            // ns / cycle cycles of `width` instructions each
            MicroOp::Compute { ns } => (front::Kind::Compute, ns * NS * u64::from(p.width) / p.cycle),
            MicroOp::ReadClock | MicroOp::Reclaimed { .. } | MicroOp::Done { .. } => {
                unreachable!("the thread runs {op:?} itself")
            }
        };
        // the previous micro-op went, so the front end fetches again
        self.core.push(front::Op::new(kind, gap, ()), at).expect("one micro-op at a time");
        self.cur = Some(kind);
        self.id = None;
        self.used = used || kind != front::Kind::Load;
        self.refresh();
    }

    /// The core's time is `now` (a message, an action): what completed by
    /// then leaves the window.
    pub fn at(&mut self, now: Time) {
        self.now = self.now.max(now);
        self.core.at(now);
        self.refresh();
    }

    /// When the current micro-op may go (None: not before a completion).
    pub fn ready(&self) -> Option<Time> {
        self.ready
    }

    /// Whether a miss issued now finds a fill buffer.
    pub fn fill_free(&self) -> bool {
        self.core.fill_free()
    }

    /// Whether the thread reads the current load's word.
    pub fn used(&self) -> bool {
        self.used
    }

    /// The current micro-op goes at `at`: a window entry (load, exchange,
    /// mfence) as a hit of `latency`, or (None) as a miss of `line` until
    /// [`Front::arrived`]. A store or a computation went at its dispatch.
    pub fn issue(&mut self, at: Time, latency: Option<Time>, line: Line) {
        let (kind, id) = (self.cur.take(), self.id.take());
        self.ready = None;
        let (Some(kind), Some(id)) = (kind, id) else { return };
        if matches!(kind, front::Kind::Store | front::Kind::Compute) {
            return;
        }
        let access = match latency {
            Some(l) => Access::Hit(l),
            // (`prog_action` offers a miss only with a fill buffer free)
            None if self.core.fill_free() => Access::Miss,
            None => Access::LateMiss,
        };
        self.core.issue_as(id, at, access).expect("the front end offered it");
        if latency.is_none() {
            if self.used {
                self.out = Some(id);
            } else {
                self.misses.push((line, id));
            }
        }
    }

    /// The data of a miss of `line` arrived at `at`.
    pub fn arrived(&mut self, line: Line, at: Time) {
        let id = match self.misses.iter().position(|m| m.0 == line) {
            Some(i) => Some(self.misses.swap_remove(i).1),
            None => self.out.take(),
        };
        if let Some(id) = id {
            self.core.complete(id, at).expect("a miss the front end issued");
            self.refresh();
        }
    }

    /// Work out when the current micro-op may go, dispatching it if the
    /// window and the store buffer let it. A store goes at its dispatch
    /// (into BI's buffer, which performs it); a computation is over when
    /// its instructions dispatched.
    fn refresh(&mut self) {
        let Some(kind) = self.cur else {
            self.ready = None;
            return;
        };
        let next = self.core.next_from(Time::MAX, Queues::Window);
        if self.id.is_none() && kind != front::Kind::Compute && self.core.dispatched_at().is_some() {
            // dispatched last: its index is the count of instructions before it
            let id = self.core.stats().instructions - 1;
            self.id = Some(id);
            if kind == front::Kind::Store && self.buffered {
                // held until BI's buffer performs it
                self.stores.push_back(id);
            } else if kind == front::Kind::Store {
                let t = self.core.dispatched_at().expect("dispatched");
                self.core.issue(id, t, Some(0)).expect("a store just dispatched");
            }
        }
        self.ready = match kind {
            front::Kind::Store => self.id.and(self.core.dispatched_at()),
            front::Kind::Compute => self.core.dispatched_through(),
            _ => match next {
                Next::Issue { id, at, .. } if Some(id) == self.id => Some(at),
                _ => None,
            },
        };
    }
}

impl Bi {
    /// Misses core `c` has in flight, each holding one of its fill buffers:
    /// loads (gone past or waited for), ownership requests (an exchange's,
    /// a store's, the store buffer's prefetches) and flushes. (A dirty
    /// victim's write-back is not counted: it leaves with its `PutM`.)
    pub(super) fn misses_in_flight(c: &Core) -> usize {
        c.loads.len()
            + usize::from(matches!(c.wait, Wait::Miss { .. }))
            + c.flushing.len()
            + c.prog.as_ref().map_or(0, |p| p.rfo.len())
    }

    /// Whether core `c` has a fill buffer free for another miss.
    pub(super) fn fill_free(&self, c: &Core) -> bool {
        Self::misses_in_flight(c) < usize::from(self.params.fill_buffers)
    }
}
