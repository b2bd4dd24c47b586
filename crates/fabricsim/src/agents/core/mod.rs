//! One core front end for every protocol's timed cores (docs/core.md): an
//! out-of-order window in the style of interval simulation, loads that
//! issue as soon as their address is known, and a store buffer that drains
//! under TSO or RC.
//!
//! Timing only: the core decides *when* each memory operation of a
//! program may issue; the driver (a protocol's timing engine, an agent, a
//! test) performs it and says when it completed. A driver
//!
//! 1. asks [`Core::next`] what the core does before a time `until`;
//! 2. on [`Next::Fetch`] gives it the program's next operation
//!    ([`Core::push`]) or says there is none ([`Core::close`]);
//! 3. on [`Next::Issue`] performs the operation and reports it with
//!    [`Core::issue`]: with its latency when known at once (a hit: the
//!    core accounts it and schedules nothing), else as outstanding, to be
//!    ended by [`Core::complete`];
//! 4. on [`Next::Wait`] comes back at that time, on [`Next::Blocked`] after
//!    the next [`Core::complete`].
//!
//! Operations are identified by their instruction index ([`OpId`]). The
//! core allocates its queues once, from its [`Params`]; nothing on the
//! path above allocates.
//!
//! The store buffer of the cores that run programs under a protocol (and
//! are checked) is [`StoreBuffer`] (`store_buffer.rs`), whose drain-order
//! rule this front end's store buffer shares (`buffers.rs`).

mod buffers;
mod entries;
mod params;
pub mod presets;
pub mod store_buffer;
#[cfg(test)]
mod tests;
mod window;

use std::collections::VecDeque;

pub use entries::Entries;
pub use params::{Model, ParamError, Params, MAX_CYCLE, MAX_ENTRIES};
pub use store_buffer::{Buffered, Class, StoreBuffer};

use crate::engine::Time;
use buffers::{barrier, frees_at, waits_for, Buffer};
use window::{loads, retired_by, Clock, Window};

/// An operation's instruction index in its core's program.
pub type OpId = u64;

/// What a program's operation is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kind {
    Load,
    Store,
    /// Read-modify-write (a locked instruction, an atomic).
    Rmw,
    /// A non-temporal store, through the write-combining buffers.
    WcStore,
    /// Full fence: waits for every older operation (the store buffer and
    /// the write-combining buffers drained); younger loads wait for it.
    Mfence,
    /// Store fence: waits for every older store and write-combining entry;
    /// younger stores wait for it, loads do not.
    Sfence,
    /// No memory operation: only the `gap` instructions (computation at
    /// the end of a program, or between phases).
    Compute,
}

/// Ordering marks a workload puts on an operation (RC; TSO ignores them).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Order {
    Relaxed,
    /// Younger loads wait for this load or RMW.
    Acquire,
    /// This store or RMW waits for everything older.
    Release,
}

/// One operation of a core's program.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Op<T> {
    pub kind: Kind,
    /// Instructions before it that are not memory operations (the
    /// computation since the previous operation).
    pub gap: u64,
    /// A load or RMW whose address comes from the previous load or RMW
    /// (a pointer chase): it issues when that one completed.
    pub dep: bool,
    pub order: Order,
    /// The driver's own data (an address, a workload operation), handed
    /// back with [`Next::Issue`].
    pub payload: T,
}

impl<T> Op<T> {
    pub fn new(kind: Kind, gap: u64, payload: T) -> Self {
        Op { kind, gap, dep: false, order: Order::Relaxed, payload }
    }

    /// Dependent on the previous load.
    pub fn dep(self) -> Self {
        Op { dep: true, ..self }
    }

    pub fn ordered(self, order: Order) -> Self {
        Op { order, ..self }
    }
}

/// What the core does next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Next<T> {
    /// Operation `id` may issue at `at` (at or before `until`; the driver
    /// issues it at the later of `at` and its own time).
    Issue { id: OpId, kind: Kind, at: Time, payload: T },
    /// Nothing issues before this time (after `until`).
    Wait(Time),
    /// Nothing issues until an outstanding operation completes.
    Blocked,
    /// The core needs the program's next operation, or [`Core::close`].
    Fetch,
    /// The program is over and every operation issued ([`Core::end`]).
    Finished,
}

/// The queues [`Core::next_from`] looks at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Queues {
    /// The reorder buffer's loads, RMWs and mfences.
    Window,
    /// The store buffer and the write-combining buffers.
    Buffers,
    All,
}

/// How an operation issued ([`Core::issue_as`]): what it holds of the
/// first level's fill buffers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// A hit in the first level: done this long after issue, no fill buffer.
    Hit(Time),
    /// A miss of the first level whose data arrives this long after issue
    /// (a hit in a lower level): it holds a fill buffer until then.
    Fill(Time),
    /// A miss whose completion is not known: it holds a fill buffer until
    /// [`Core::complete`].
    Miss,
    /// A miss found only after it issued (the first level held a stale
    /// copy): as `Miss`, and it takes a fill buffer even when none is free.
    LateMiss,
}

/// A driver's report the core rejects.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CoreError {
    /// No operation with this id waits to issue (or is outstanding, for
    /// `complete`).
    Unknown(OpId),
    /// A miss needs a fill buffer and all are in use: issue it after a
    /// completion.
    NoFillBuffer,
    /// `push` while the core still holds an undispatched operation, or
    /// after `close`.
    NotFetching,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum State {
    /// Dispatched, not issued.
    Waiting,
    /// Issued, completion not known yet (holds a fill buffer).
    Out,
    /// Completes (completed) at this time.
    Done(Time),
}

/// A dispatched memory operation or fence.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Entry<T> {
    seq: OpId,
    kind: Kind,
    order: Order,
    /// The producer it waits for (a dependent load or RMW).
    dep: Option<OpId>,
    /// It issues no earlier than this: its dispatch, raised by the
    /// completions of entries it waited for that have since left.
    lo: Time,
    state: State,
    /// Whether it holds a fill buffer (issued as a miss).
    miss: bool,
    payload: T,
}

/// Counters of a core.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Stats {
    /// Instructions dispatched (operations and their gaps).
    pub instructions: u64,
    /// Operations issued with a known latency (accounted, no event).
    pub hits: u64,
    /// Operations issued outstanding (each holds a fill buffer).
    pub misses: u64,
    /// Of those, misses found after they issued ([`Access::LateMiss`])
    /// while every fill buffer was in use: how far the bound was exceeded.
    pub late_overruns: u64,
}

#[derive(Debug, Clone, Copy)]
struct Pending<T> {
    op: Op<T>,
    /// Not before this (when the driver fetched it).
    at: Time,
}

/// Which queue an entry is in (an index of `Core::waiting`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Q {
    Window = 0,
    Sb = 1,
    Wc = 2,
}

/// One core: its window, store buffer and write-combining buffers.
#[derive(Debug, Clone)]
pub struct Core<T> {
    p: Params,
    clock: Clock,
    /// Instructions dispatched: the next one's index.
    seq: OpId,
    pending: Option<Pending<T>>,
    window: Window<T>,
    sb: Buffer<T>,
    wc: Buffer<T>,
    /// The youngest load or RMW (a dependent one's producer).
    last_load: Option<OpId>,
    /// The fill buffers.
    fill: Entries,
    /// The driver's latest time ([`Core::at`], [`Core::issue`]).
    now: Time,
    /// The dispatch cycle of the latest operation dispatched.
    disp: Time,
    closed: bool,
    /// The latest completion.
    last: Time,
    stats: Stats,
    /// Entries waiting to issue, per queue (by `Q`). They are mostly the
    /// youngest, so the searches for them go from the back and stop once
    /// they met them all, instead of walking a window of hundreds of
    /// issued entries (hits retire behind an older miss) per operation.
    waiting: [u32; 3],
    /// Entries issued, completion not known yet.
    out: u32,
    /// Window entries that hold every younger load ([`barrier`]): while
    /// there are none, a load waits for nothing but its producer.
    barriers: u32,
}

impl<T: Copy> Core<T> {
    pub fn new(p: Params) -> Result<Self, ParamError> {
        p.validate()?;
        Ok(Core {
            p,
            clock: Clock::default(),
            seq: 0,
            pending: None,
            window: VecDeque::with_capacity(p.rob as usize),
            sb: VecDeque::with_capacity(p.store_buffer as usize),
            wc: VecDeque::with_capacity(p.wc_buffers as usize),
            last_load: None,
            fill: Entries::new(p.fill_buffers),
            now: 0,
            disp: 0,
            closed: false,
            last: 0,
            stats: Stats::default(),
            waiting: [0; 3],
            out: 0,
            barriers: 0,
        })
    }

    pub fn params(&self) -> &Params {
        &self.p
    }

    pub fn stats(&self) -> Stats {
        self.stats
    }

    /// The program's next operation, available from time `at`.
    pub fn push(&mut self, op: Op<T>, at: Time) -> Result<(), CoreError> {
        if self.pending.is_some() || self.closed {
            return Err(CoreError::NotFetching);
        }
        self.pending = Some(Pending { op, at });
        self.dispatch();
        Ok(())
    }

    /// The program has no more operations.
    pub fn close(&mut self) {
        self.closed = true;
    }

    /// Whether a miss may issue now (a fill buffer is free at the driver's
    /// latest time).
    pub fn fill_free(&self) -> bool {
        self.fill.free(self.now)
    }

    /// When a fill buffer held by a miss of known latency frees next (None:
    /// only a completion frees one).
    pub fn fill_frees_at(&self) -> Option<Time> {
        self.fill.frees_at(self.now)
    }

    /// The payload of operation `id` (dispatched, not yet left).
    pub fn payload(&self, id: OpId) -> Option<&T> {
        self.find(id).map(|(q, i)| &self.queue(q)[i].payload)
    }

    /// Stores and sfences in the store buffer.
    pub fn buffered(&self) -> usize {
        self.sb.len()
    }

    /// The payloads of the stores not yet performed, oldest first (a
    /// driver's store-to-load forwarding looks them up).
    pub fn buffered_stores(&self) -> impl Iterator<Item = &T> {
        self.sb.iter().filter(|e| e.kind == Kind::Store && !matches!(e.state, State::Done(_))).map(|e| &e.payload)
    }

    /// The payloads of the stores not yet issued (waiting to perform),
    /// oldest first.
    pub fn waiting_stores(&self) -> impl Iterator<Item = &T> {
        self.sb.iter().filter(|e| e.kind == Kind::Store && e.state == State::Waiting).map(|e| &e.payload)
    }

    /// Whether an operation of `kind` pushed now dispatches at once: no
    /// operation waits to dispatch and its buffer has a free entry (after
    /// [`Core::at`]). Only the buffers are checked, not the window.
    pub fn has_room(&self, kind: Kind) -> bool {
        self.pending.is_none()
            && match kind {
                Kind::Store | Kind::Sfence => self.sb.len() < self.p.store_buffer as usize,
                Kind::WcStore => self.wc.len() < self.p.wc_buffers as usize,
                Kind::Load | Kind::Rmw => (loads(&self.window).0) < self.p.load_queue,
                Kind::Mfence | Kind::Compute => true,
            }
    }

    /// Every operation pushed has issued and completed.
    pub fn drained(&self) -> bool {
        self.pending.is_none() && self.all_issued()
    }

    /// The driver's time is `now`: nothing will be pushed before it, and
    /// what completed by then leaves the window and the buffers.
    pub fn at(&mut self, now: Time) {
        self.now = self.now.max(now);
        self.advance(now);
    }

    /// When the core is done: its last dispatch cycle ended and its last
    /// operation completed.
    pub fn end(&self) -> Time {
        self.clock.end(self.p.cycle).max(self.last)
    }

    /// When the operation pushed last dispatched (None while it waits to).
    pub fn dispatched_at(&self) -> Option<Time> {
        self.pending.is_none().then_some(self.disp)
    }

    /// When every instruction pushed so far has dispatched: the current
    /// cycle's start plus its slots used, a width-th of a cycle each (None
    /// while an operation waits to dispatch). A driver whose program only
    /// computes ([`Kind::Compute`]) goes on from here: `n` instructions
    /// cost `n / width` cycles.
    pub fn dispatched_through(&self) -> Option<Time> {
        self.pending
            .is_none()
            .then(|| self.clock.cyc + Time::from(self.clock.used) * self.p.cycle / Time::from(self.p.width))
    }

    /// What issues next from `queues`, no later than `until`, for a driver
    /// that fetches on its own terms (an in-order issue stage): never
    /// [`Next::Fetch`]; [`Next::Blocked`] when nothing there waits to issue.
    pub fn next_from(&mut self, until: Time, queues: Queues) -> Next<T> {
        self.dispatch();
        match self.best(queues) {
            Some((t, ..)) if t > until => Next::Wait(t),
            Some((t, q, i)) => {
                let e = self.queue(q)[i];
                Next::Issue { id: e.seq, kind: e.kind, at: t, payload: e.payload }
            }
            None => Next::Blocked,
        }
    }

    /// The waiting entry of `queues` that may issue first (of equal
    /// times, the first queue's, then the oldest).
    fn best(&self, queues: Queues) -> Option<(Time, Q, usize)> {
        debug_assert!(self.counts_hold());
        let mut best: Option<(Time, Q, usize)> = None;
        let qs = [(Q::Window, &self.window), (Q::Sb, &self.sb), (Q::Wc, &self.wc)];
        let qs = match queues {
            Queues::Window => &qs[..1],
            Queues::Buffers => &qs[1..],
            Queues::All => &qs[..],
        };
        for &(q, buf) in qs {
            let mut unseen = self.waiting[q as usize];
            let mut first: Option<(Time, usize)> = None;
            for (i, y) in buf.iter().enumerate().rev() {
                if unseen == 0 {
                    break;
                }
                if y.state != State::Waiting {
                    continue;
                }
                unseen -= 1;
                if let Some(t) = self.ready(y) {
                    // from the back: an older entry of the same time wins
                    if first.is_none_or(|b| t <= b.0) {
                        first = Some((t, i));
                    }
                }
            }
            if let Some((t, i)) = first {
                if best.is_none_or(|b| t < b.0) {
                    best = Some((t, q, i));
                }
            }
        }
        best
    }

    /// The counters `waiting`, `out` and `barriers` agree with the queues.
    fn counts_hold(&self) -> bool {
        let count = |b: &VecDeque<Entry<T>>, s: State| b.iter().filter(|e| e.state == s).count() as u32;
        let bars = self.window.iter().filter(|e| barrier(e, self.p.model)).count() as u32;
        self.waiting
            == [count(&self.window, State::Waiting), count(&self.sb, State::Waiting), count(&self.wc, State::Waiting)]
            && self.out == count(&self.window, State::Out) + count(&self.sb, State::Out) + count(&self.wc, State::Out)
            && self.barriers == bars
    }

    /// What the core does next, no later than `until`.
    pub fn next(&mut self, until: Time) -> Next<T> {
        self.dispatch();
        let best = self.best(Queues::All);
        // an operation not yet fetched dispatches at the clock or later
        let horizon = if self.pending.is_none() && !self.closed { self.clock.cyc } else { Time::MAX };
        match best {
            Some((t, q, i)) if t <= horizon => {
                if t > until {
                    return Next::Wait(t);
                }
                let e = self.queue(q)[i];
                Next::Issue { id: e.seq, kind: e.kind, at: t, payload: e.payload }
            }
            _ if horizon < Time::MAX => Next::Fetch,
            Some((t, ..)) => Next::Wait(t),
            None if self.pending.is_some() || self.fill.open() > 0 => Next::Blocked,
            None if !self.closed => Next::Fetch,
            None if self.all_issued() => Next::Finished,
            None => Next::Blocked,
        }
    }

    /// Operation `id` issued at `at`: it completes `latency` later when
    /// that is known (`Some`: a hit, no fill buffer), else it is outstanding
    /// until [`Core::complete`] and holds a fill buffer (a fence never does).
    pub fn issue(&mut self, id: OpId, at: Time, latency: Option<Time>) -> Result<(), CoreError> {
        self.issue_as(id, at, latency.map_or(Access::Miss, Access::Hit))
    }

    /// Operation `id` issued at `at` as `access`: a miss of the first level
    /// holds a fill buffer from `at` until its data arrives (known at issue
    /// for [`Access::Fill`], at [`Core::complete`] otherwise); a fence
    /// never holds one.
    pub fn issue_as(&mut self, id: OpId, at: Time, access: Access) -> Result<(), CoreError> {
        let (q, i) = self.find(id).ok_or(CoreError::Unknown(id))?;
        if self.queue(q)[i].state != State::Waiting {
            return Err(CoreError::Unknown(id));
        }
        self.now = self.now.max(at);
        let fence = matches!(self.queue(q)[i].kind, Kind::Mfence | Kind::Sfence | Kind::Compute);
        let access = match access {
            Access::Fill(l) if fence => Access::Hit(l),
            a => a,
        };
        // (a hit needs no fill buffer: not counted)
        let full = !fence && !matches!(access, Access::Hit(_)) && !self.fill.free(at);
        if full && matches!(access, Access::Fill(_) | Access::Miss) {
            return Err(CoreError::NoFillBuffer);
        }
        let (state, miss) = match access {
            Access::Miss | Access::LateMiss if fence => {
                self.last = self.last.max(at);
                (State::Done(at), false)
            }
            Access::Hit(l) | Access::Fill(l) => {
                if let Access::Fill(_) = access {
                    self.fill.hold_until(at, at + l);
                }
                self.last = self.last.max(at + l);
                self.stats.hits += 1;
                (State::Done(at + l), false)
            }
            Access::Miss | Access::LateMiss => {
                self.fill.hold();
                self.stats.misses += 1;
                self.stats.late_overruns += u64::from(full);
                (State::Out, true)
            }
        };
        let e = &mut self.queue_mut(q)[i];
        e.state = state;
        e.miss = miss;
        self.waiting[q as usize] -= 1;
        self.out += u32::from(state == State::Out);
        Ok(())
    }

    /// Outstanding operation `id` completed at `at` (its store performed,
    /// its load's data arrived).
    pub fn complete(&mut self, id: OpId, at: Time) -> Result<(), CoreError> {
        let (q, i) = self.find(id).ok_or(CoreError::Unknown(id))?;
        let e = &mut self.queue_mut(q)[i];
        if e.state != State::Out {
            return Err(CoreError::Unknown(id));
        }
        e.state = State::Done(at);
        if e.miss {
            e.miss = false;
            self.fill.release();
        }
        self.out -= 1;
        self.last = self.last.max(at);
        Ok(())
    }

    // ------------------------------------------------------------ internals

    fn all_issued(&self) -> bool {
        debug_assert!(self.counts_hold());
        self.waiting == [0; 3] && self.out == 0
    }

    fn queue(&self, q: Q) -> &VecDeque<Entry<T>> {
        match q {
            Q::Window => &self.window,
            Q::Sb => &self.sb,
            Q::Wc => &self.wc,
        }
    }

    fn queue_mut(&mut self, q: Q) -> &mut VecDeque<Entry<T>> {
        match q {
            Q::Window => &mut self.window,
            Q::Sb => &mut self.sb,
            Q::Wc => &mut self.wc,
        }
    }

    fn find(&self, id: OpId) -> Option<(Q, usize)> {
        [Q::Window, Q::Sb, Q::Wc]
            .into_iter()
            // every queue is in program order
            .find_map(|q| self.queue(q).binary_search_by_key(&id, |e| e.seq).ok().map(|i| (q, i)))
    }

    /// When `y` may issue: after its dispatch and every older entry it
    /// waits for (None while one of those has no known completion).
    fn ready(&self, y: &Entry<T>) -> Option<Time> {
        let mut t = y.lo;
        if y.kind == Kind::Load && self.barriers == 0 {
            // its producer, if any, is a load or RMW: in the window
            if let Some(p) = y.dep {
                if let Ok(i) = self.window.binary_search_by_key(&p, |e| e.seq) {
                    match self.window[i].state {
                        State::Done(d) => t = t.max(d),
                        _ => return None,
                    }
                }
            }
            return Some(t);
        }
        for buf in [&self.window, &self.sb, &self.wc] {
            for x in buf.iter() {
                if x.seq >= y.seq {
                    break;
                }
                if waits_for(x, y, self.p.model) {
                    match x.state {
                        State::Done(d) => t = t.max(d),
                        _ => return None,
                    }
                }
            }
        }
        Some(t)
    }

    /// Dispatch the pending operation as far as the window and the buffers
    /// allow.
    fn dispatch(&mut self) {
        let Some(Pending { op, at }) = self.pending else { return };
        let (w, cycle, rob) = (self.p.width, self.p.cycle, u64::from(self.p.rob));
        self.clock.start(at);
        let own = u64::from(op.kind != Kind::Compute);
        let mut gap = op.gap;
        // the reorder buffer: instruction s waits until every window entry
        // `rob` or more instructions older retired
        let mut i = 0;
        while i < self.window.len() {
            let end = self.seq + gap + own;
            let limit = self.window[i].seq + rob;
            if limit >= end {
                break;
            }
            if limit > self.seq {
                let n = limit - self.seq;
                self.take(n);
                gap -= n;
            }
            match retired_by(&self.window, i) {
                Some(t) => {
                    let before = self.window.len();
                    self.advance(t);
                    // retired entries left the window
                    i = (i + 1).saturating_sub(before - self.window.len());
                }
                None => {
                    self.pending = Some(Pending { op: Op { gap, ..op }, at });
                    return;
                }
            }
        }
        if gap > 0 {
            self.take(gap);
        }
        if own == 0 {
            self.pending = None;
            return;
        }
        // the operation's own entry: a load queue, store buffer or
        // write-combining entry must be free
        let blocked = match op.kind {
            // (the window holds at least the loads)
            Kind::Load | Kind::Rmw if self.window.len() < self.p.load_queue as usize => None,
            Kind::Load | Kind::Rmw => match loads(&self.window) {
                (n, Some(first)) if n >= self.p.load_queue => Some(retired_by(&self.window, first)),
                _ => None,
            },
            Kind::Store | Kind::Sfence if self.sb.len() >= self.p.store_buffer as usize => Some(frees_at(&self.sb)),
            Kind::WcStore if self.wc.len() >= self.p.wc_buffers as usize => Some(frees_at(&self.wc)),
            _ => None,
        };
        match blocked {
            Some(Some(t)) => self.advance(t),
            Some(None) => {
                self.pending = Some(Pending { op: Op { gap: 0, ..op }, at });
                return;
            }
            None => {}
        }
        let disp = self.clock.take(1, w, cycle);
        self.disp = disp;
        self.stats.instructions += 1;
        let seq = self.seq;
        self.seq += 1;
        let dep = match op.kind {
            Kind::Load | Kind::Rmw if op.dep => self.last_load,
            _ => None,
        };
        let order = match self.p.model {
            Model::Tso => Order::Relaxed,
            Model::Rc => op.order,
        };
        let e =
            Entry { seq, kind: op.kind, order, dep, lo: disp, state: State::Waiting, miss: false, payload: op.payload };
        let q = match op.kind {
            Kind::Load | Kind::Rmw => {
                self.last_load = Some(seq);
                Q::Window
            }
            Kind::Mfence => Q::Window,
            Kind::Store | Kind::Sfence => Q::Sb,
            Kind::WcStore => Q::Wc,
            Kind::Compute => unreachable!("no entry"),
        };
        self.barriers += u32::from(q == Q::Window && barrier(&e, self.p.model));
        self.waiting[q as usize] += 1;
        self.queue_mut(q).push_back(e);
        self.pending = None;
    }

    /// Dispatch `n` instructions of a gap.
    fn take(&mut self, n: u64) {
        self.clock.take(n, self.p.width, self.p.cycle);
        self.seq += n;
        self.stats.instructions += n;
    }

    /// Dispatch resumes at `t` at the earliest; entries completed by then
    /// leave (the window's in order, as they retire).
    fn advance(&mut self, t: Time) {
        self.clock.start(t);
        let now = self.clock.cyc;
        while let Some(&x) = self.window.front() {
            match x.state {
                State::Done(d) if d <= now => {
                    self.window.pop_front();
                    self.barriers -= u32::from(barrier(&x, self.p.model));
                    self.left(&x, d);
                }
                _ => break,
            }
        }
        for q in [Q::Sb, Q::Wc] {
            let mut i = 0;
            while i < self.queue(q).len() {
                let x = self.queue(q)[i];
                match x.state {
                    State::Done(d) if d <= now => {
                        self.queue_mut(q).remove(i);
                        self.left(&x, d);
                    }
                    _ => i += 1,
                }
            }
        }
    }

    /// `x` left its queue, completed at `d`: the entries that waited for it
    /// keep that bound.
    fn left(&mut self, x: &Entry<T>, d: Time) {
        let model = self.p.model;
        for q in [Q::Window, Q::Sb, Q::Wc] {
            // only waiting entries change: from the back until all met
            let mut unseen = self.waiting[q as usize];
            for y in self.queue_mut(q).iter_mut().rev() {
                if unseen == 0 || y.seq <= x.seq {
                    break;
                }
                if y.state != State::Waiting {
                    continue;
                }
                unseen -= 1;
                if waits_for(x, y, model) {
                    y.lo = y.lo.max(d);
                    if y.dep == Some(x.seq) {
                        y.dep = None;
                    }
                }
            }
        }
    }
}
