//! `bi_runtime`: the BI runtime ([`super::runtime`]) checked exhaustively on
//! a small non-coherent machine (docs/design/bi.md §3.5, slice 4).
//!
//! **Abstraction.** Two coherence domains, each **one cache** (line →
//! words, dirty) shared by its threads, and one global memory. Inside a
//! domain the MESI directory gives all cores one coherent view and every
//! flush acts domain-wide; that machinery is checked on its own by
//! `fabricsim check` with protocol = "bi" (the single-writer invariant of
//! each domain) and "mesi", so here a domain is its coherent view. Across
//! domains nothing is kept coherent: a line cached in a domain is returned
//! however stale it is until a flush or an eviction drops it.
//!
//! Each micro-op the runtime emits acts **atomically** on its domain's cache
//! and the memory: a load miss fills from memory, clflushopt writes a dirty
//! line back and drops it, clwb writes back and keeps it, mfence is a no-op.
//! So a clflushopt is complete when issued, which only removes behaviours
//! that the runtime's own fences exclude (every batch of flushes in Figs 8/9
//! is followed by an mfence before a load that depends on it, and x86 orders
//! a clflushopt with later accesses to its line). The whole system is
//! therefore one agent: there are no messages.
//!
//! Threads (all through [`Runtime`], the code that will be timed):
//! - domain 0: the **writer** loops `Alloc(s)` (the lowest slot its
//!   allocator holds; a reused slot gets generation + 1), `Write(s, gen)`,
//!   `Assign(root, s)`, `Free(old)`, `Reclaim` (a reclaimed slot returns to
//!   the allocator).
//! - domain 1: the **reader** loops `Enter`, `Deref(root)`, `ReadObj`,
//!   `Exit`; between any two of its calls (inside a section too) it may run
//!   `reader_engine` (`Quiesce`). The engine runs on the reader's thread,
//!   as Fig 8 line 42's `reader_time[thdid()]` says; with `engine_thread`
//!   it runs instead on a separate quiescence thread of the reader's domain
//!   (§4.2's "in the background"), one engine at a time, at any time.
//!
//! Environment, at any time: in the reader's domain `Evict` of an object
//! line or of the dirty timing record (written back early) and `Prefetch`
//! of an object line (the hardware prefetcher); in the writer's domain
//! `Evict` of its copy of the timing record during `bi_reclaim` (the one
//! line there another domain writes; between its two loads it gives a
//! mixed snapshot). Not offered, because they can only make a line fresher
//! or change nothing: evictions of the root (refreshed by the engine and
//! the NULL retry), of clean lines a thread alone writes, prefetches of
//! lines that are flushed before every read.
//!
//! Time: a ghost global clock `G` (`Tick`, up to the horizon `H`); domain
//! `d` reads `G + off_d` (tick = 1), with every pair of offsets in
//! `0..=skew` as an initial state and `D = skew` in `bi_reclaim`.
//! Urgency: `Tick` is disabled unless the reader's last completed
//! `reader_engine` began less than `P` ticks ago, so at every instant the
//! reader has finished a cache quiescence that began after `now − P`
//! (`P ≥ 2`: with `P = 1` an engine would have to begin in the future). No
//! tick falls inside one of the writer's calls (a call is shorter than a
//! tick), except, with `writer_ticks`, inside `bi_reclaim` (a writer
//! delayed between its clock read and its two loads of the timing record,
//! and after them), and a reader does not enter in the tick it left its
//! last section (clock reads of one thread are distinct, as rdtsc's are).
//!
//! Invariants (each a violation kind):
//! 1. `generation`: `ReadObj` through a pointer to slot `s` of generation
//!    `g` returns payload `g` (no load returns bytes of a reclaimed and
//!    reused object).
//! 2. `staleness`: a root written back at `t` is seen (or a newer one) by
//!    every load of the root at `G > t + P + D`.
//! 3. `order`: memory's version of each line only grows (root: its store
//!    sequence; object: generation and free mark; timing record and log:
//!    each field), and the root versions the reader loads never decrease.
//! 4. `drain`: when a `bi_reclaim` found no reader inside, every object
//!    freed at least `P + D` ticks before it began was reclaimed (the FIFO
//!    strands nothing).
//! 5. [`GHOST_SNAPSHOT`] (with `ghost`, the default): the paper's own local
//!    claim for its exit-first order (§5.2: "the value of exit can never be
//!    never than enter", read "newer"), which is not end-to-end safety: the
//!    checker must tell the two apart (docs/design/bi.md §7). Every stamp the
//!    reader stores carries, in unused words of the timing record's line,
//!    the number of the section it belongs to (enter of section `k`, exit
//!    of section `k`; the initial record is section 0); the numbers travel
//!    with the line through caches and memory and the runtime never loads
//!    them. When `bi_reclaim` has loaded both words, the exit it read must
//!    not belong to a later section than the enter it read. A consistent
//!    copy of the record has exit's section = enter's (outside) or one
//!    less (inside); only a snapshot mixed from two copies can break it.

use std::fmt;

use super::runtime::{
    ptr_obj, ptr_tag, ptr_word, Call, Layout, MicroOp, RtConfig, RtMutant, Runtime, Thread, Word, ENTER, EXIT,
    FREE_MARK, HEAD, TAIL,
};
use crate::agents::protocol::{AgentId, ChannelOrder, Ctx, Protocol, Step, Violation};
use crate::engine::pack::{get_byte, Pack};

/// Lines: the BI pointer, the reader's timing record, the writer's freed
/// log, its modified log (fixed, in memory only), then the object slots.
pub const ROOT: u64 = 0;
pub const TIME: u64 = 1;
pub const FREED: u64 = 2;
pub const MODIFIED: u64 = 3;
pub const OBJ: u64 = 4;
/// Most object slots.
pub const MAX_SLOTS: usize = 4;
/// Words per modelled line (an object: logged_time, log_flag, free_mark, payload).
const WORDS: usize = 6;

pub type LineVal = [Word; WORDS];

/// Ghost words of the timing record's line (the runtime uses words 0 and
/// 1): the section numbers of its enter and of its exit stamp.
const SECTION_OF_ENTER: usize = 2;
const SECTION_OF_EXIT: usize = 3;

/// The violation kind of invariant 5 (the paper's local claim, a ghost).
pub const GHOST_SNAPSHOT: &str = "ghost: exit newer than enter in the writer's snapshot";

/// Deliberately broken BI the checker must catch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Mutant {
    /// `time_quiescence` loads `enter` before `exit`.
    EnterBeforeExit,
    /// `bi_dereference` without the `free_mark` check.
    NoFreeMarkCheck,
    /// `cache_quiescence(t) = t`.
    NoPeriodSubtraction,
    /// `D = 0` while the domains' offsets differ.
    SkewIgnored,
}

pub const MUTANTS: [(&str, Mutant); 4] = [
    ("enter-before-exit", Mutant::EnterBeforeExit),
    ("no-free-mark-check", Mutant::NoFreeMarkCheck),
    ("no-period-subtraction", Mutant::NoPeriodSubtraction),
    ("skew-ignored", Mutant::SkewIgnored),
];

pub fn mutant_by_name(s: &str) -> Option<Mutant> {
    MUTANTS.iter().find(|m| m.0 == s).map(|m| m.1)
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
enum WPhase {
    #[default]
    Alloc,
    Write,
    Assign,
    Free,
    Reclaim,
}
crate::pack_enum!(WPhase { Alloc, Write, Assign, Free, Reclaim });

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
enum RPhase {
    #[default]
    Enter,
    Deref,
    ReadObj,
    Exit,
}
crate::pack_enum!(RPhase { Enter, Deref, ReadObj, Exit });

/// The writer's program around its runtime thread.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct Writer {
    t: Thread,
    /// The value of its last load or clock read, for the runtime.
    loaded: Option<Word>,
    phase: WPhase,
    /// The allocator's free slots (a bit mask).
    free: u8,
    /// The object root points to, and the one being set up.
    cur: Option<u8>,
    new: u8,
    old: Option<u8>,
    /// Each slot's generation (payload).
    gens: Vec<u8>,
    /// Stores to root so far (the pointer's version).
    seq: u8,
    /// The running reclaim's start (G) and its clock read.
    started: u8,
    clock: i64,
    /// Ghost, between `bi_reclaim`'s two loads of the timing record only:
    /// the word it loaded first and that stamp's section number.
    snap: Option<(u8, u8)>,
}

/// The reader's program around its runtime thread.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct Reader {
    t: Thread,
    loaded: Option<Word>,
    phase: RPhase,
    /// The pointer its section dereferenced.
    ptr: Word,
    /// A reader_engine is running (begun at `engine_start`).
    engine: bool,
    engine_start: u8,
    /// When the last completed reader_engine began.
    last_engine: u8,
    /// The newest root version it loaded.
    seen_root: u8,
    /// It has left a section.
    exited: bool,
    /// With `engine_thread`: the quiescence thread's runtime state and its last load.
    et: Thread,
    eloaded: Option<Word>,
}

/// The whole system: one agent (see the module doc).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct System {
    /// Global time and each domain's clock offset.
    g: u8,
    off: [u8; 2],
    mem: Vec<LineVal>,
    /// Per domain, per modelled line: (words, dirty) when cached.
    cache: [Vec<Option<(LineVal, bool)>>; 2],
    writer: Writer,
    reader: Reader,
    /// Ghost: root write-backs not yet `P + D` old (version, G), and the
    /// newest version every load must see.
    root_recent: Vec<(u8, u8)>,
    root_floor: u8,
    /// Ghost: per slot, when it was freed (G of its clock read), until reclaimed.
    freed_at: Vec<Option<u8>>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    Writer,
    Reader,
    /// The reader starts a reader_engine between two of its calls (or,
    /// with `engine_thread`, the domain's quiescence thread starts one).
    Engine,
    /// With `engine_thread`: the quiescence thread's next micro-op.
    EngineStep,
    Tick,
    Evict {
        dom: u8,
        line: u8,
    },
    Prefetch {
        dom: u8,
        line: u8,
    },
}

#[derive(Debug, Clone)]
pub struct BiRuntimeCheck {
    pub slots: usize,
    /// Largest clock offset (the true skew); `D` is this unless skew-ignored.
    pub skew: u8,
    pub period: u8,
    pub horizon: u8,
    /// Objects the writer allocates in all (then it stops): 3 is the least
    /// that reuses a slot (O0, O1, O0 again).
    pub allocs: u8,
    /// Let a reader enter in the tick it left its last section (equal
    /// stamps; off by default: see the module doc).
    pub same_tick: bool,
    /// Let ticks fall inside `bi_reclaim` (between its clock read and its
    /// two loads of the timing record, and after): a writer delayed there.
    pub writer_ticks: bool,
    /// Run reader_engine on a separate quiescence thread of the reader's
    /// domain (§4.2's background invocation) instead of the reader's thread.
    pub engine_thread: bool,
    /// reader_engine writes the timing record back after its log
    /// invalidations (not first, as Fig 8 line 42).
    pub flush_before_writeback: bool,
    /// Check invariant 5 (section numbers on the timing record's stamps);
    /// off, the states are those of the safety invariants alone.
    pub ghost: bool,
    pub mutant: Option<Mutant>,
    rt: Runtime,
}

impl BiRuntimeCheck {
    /// `slots` object slots, clock offsets in `0..=skew`, period `period`
    /// (≥ 2), horizon `horizon` ticks.
    pub fn new(slots: usize, skew: u8, period: u8, horizon: u8, mutant: Option<Mutant>) -> Self {
        let layout = Layout {
            readers: 1,
            writers: 1,
            log_cap: slots as u32,
            obj_base: OBJ,
            obj_lines: 1,
            reader_time_base: TIME,
            freed_base: FREED,
            modified_base: MODIFIED,
            modified_fixed: true,
        };
        let cfg = RtConfig {
            deferred_writeback: true,
            period: period as i64,
            d: if mutant == Some(Mutant::SkewIgnored) { 0 } else { skew as i64 },
            mutant: match mutant {
                Some(Mutant::EnterBeforeExit) => Some(RtMutant::EnterBeforeExit),
                Some(Mutant::NoFreeMarkCheck) => Some(RtMutant::NoFreeMarkCheck),
                Some(Mutant::NoPeriodSubtraction) => Some(RtMutant::NoPeriodSubtraction),
                _ => None,
            },
            writeback_after_flush: false,
        };
        BiRuntimeCheck {
            slots,
            skew,
            period,
            horizon,
            allocs: 3,
            same_tick: false,
            writer_ticks: false,
            engine_thread: false,
            flush_before_writeback: false,
            ghost: true,
            mutant,
            rt: Runtime { layout, cfg },
        }
    }

    pub fn with_allocs(mut self, allocs: u8) -> Self {
        self.allocs = allocs;
        self
    }

    pub fn with_same_tick(mut self, same_tick: bool) -> Self {
        self.same_tick = same_tick;
        self
    }

    pub fn with_writer_ticks(mut self, writer_ticks: bool) -> Self {
        self.writer_ticks = writer_ticks;
        self
    }

    pub fn with_engine_thread(mut self, engine_thread: bool) -> Self {
        self.engine_thread = engine_thread;
        self
    }

    pub fn with_flush_before_writeback(mut self, on: bool) -> Self {
        self.flush_before_writeback = on;
        self.rt.cfg.writeback_after_flush = on;
        self
    }

    pub fn with_ghost(mut self, ghost: bool) -> Self {
        self.ghost = ghost;
        self
    }

    pub fn runtime(&self) -> &Runtime {
        &self.rt
    }

    /// Modelled lines (the modified log is not one: it lives in memory only).
    fn lines(&self) -> usize {
        3 + self.slots
    }

    fn index(line: u64) -> usize {
        if line < MODIFIED {
            line as usize
        } else {
            (line - 1) as usize
        }
    }

    fn line_of(idx: usize) -> u64 {
        if idx < 3 {
            idx as u64
        } else {
            idx as u64 + 1
        }
    }

    fn line_name(line: u64) -> String {
        match line {
            ROOT => "root".into(),
            TIME => "reader_time".into(),
            FREED => "freed".into(),
            MODIFIED => "modified".into(),
            o => format!("O{}", o - OBJ),
        }
    }

    /// The fixed modified log: head 0, tail 1, record 0 = root's line.
    fn modified_log() -> LineVal {
        let mut v = [0; WORDS];
        v[TAIL as usize] = 1;
        v[2] = ROOT;
        v
    }

    /// The root version a pointer word carries (its tag: sequence, generation).
    fn seq(w: Word) -> u8 {
        (ptr_tag(w) >> 8) as u8
    }

    fn gen(w: Word) -> u8 {
        (ptr_tag(w) & 0xFF) as u8
    }

    fn fill(&self, s: &mut System, d: usize, line: u64) -> usize {
        let i = Self::index(line);
        if s.cache[d][i].is_none() {
            s.cache[d][i] = Some((s.mem[i], false));
        }
        i
    }

    /// Memory's version of each line only grows (invariant 3).
    fn write_back(&self, s: &mut System, i: usize, v: LineVal) -> Result<(), Violation> {
        let old = s.mem[i];
        let line = Self::line_of(i);
        let grows = match line {
            ROOT => Self::seq(v[0]) >= Self::seq(old[0]),
            TIME => v[ENTER as usize] >= old[ENTER as usize] && v[EXIT as usize] >= old[EXIT as usize],
            FREED => v[HEAD as usize] >= old[HEAD as usize] && v[TAIL as usize] >= old[TAIL as usize],
            // an object's header goes back and forth (free_mark 1 → 0 at bi_alloc, 0 → 1 at bi_free): its
            // order is the generation the reader checks (invariant 1)
            _ => true,
        };
        if !grows {
            return Err(Violation {
                kind: "order",
                detail: format!("{} written back as {v:?} over the newer {old:?}", Self::line_name(line)),
            });
        }
        if line == ROOT {
            s.root_recent.push((Self::seq(v[0]), s.g));
        }
        s.mem[i] = v;
        Ok(())
    }

    /// Execute one micro-op of domain `d`; the value a load or clock read returns.
    fn exec(&self, s: &mut System, d: usize, op: MicroOp) -> Result<Option<Word>, Violation> {
        Ok(match op {
            MicroOp::Load { line, word } => {
                if line == MODIFIED {
                    return Ok(Some(Self::modified_log()[word as usize]));
                }
                let i = self.fill(s, d, line);
                let v = s.cache[d][i].map_or(0, |c| c.0[word as usize]);
                if d == 1 && line == ROOT {
                    self.root_loaded(s, v)?;
                }
                if d == 0 && line == TIME && self.ghost {
                    self.snapshot(s, i, word)?;
                }
                Some(v)
            }
            MicroOp::Store { line, word, val } => {
                let i = self.fill(s, d, line);
                if let Some(c) = s.cache[d][i].as_mut() {
                    c.0[word as usize] = val;
                    c.1 = true;
                    // invariant 5: the reader's copy is the newest one (it alone writes the record)
                    if line == TIME && self.ghost {
                        if word == ENTER {
                            c.0[SECTION_OF_ENTER] = c.0[SECTION_OF_EXIT] + 1;
                        } else {
                            c.0[SECTION_OF_EXIT] = c.0[SECTION_OF_ENTER];
                        }
                    }
                }
                None
            }
            MicroOp::Clflushopt { line } | MicroOp::Clwb { line } if line != MODIFIED => {
                let i = Self::index(line);
                if let Some((v, dirty)) = s.cache[d][i] {
                    if dirty {
                        self.write_back(s, i, v)?;
                    }
                    s.cache[d][i] = if matches!(op, MicroOp::Clwb { .. }) { Some((v, false)) } else { None };
                }
                None
            }
            MicroOp::Prefetch { line } if line != MODIFIED => {
                self.fill(s, d, line);
                None
            }
            MicroOp::ReadClock => Some(s.g as Word + s.off[d] as Word),
            MicroOp::Reclaimed { obj } => {
                s.writer.free |= 1 << obj;
                s.freed_at[obj as usize] = None;
                None
            }
            _ => None,
        })
    }

    /// Invariant 5 on `bi_reclaim`'s load of `word` of the timing record
    /// (line index `i`, now in the writer's cache): the first load is kept,
    /// the second is checked against it.
    fn snapshot(&self, s: &mut System, i: usize, word: u8) -> Result<(), Violation> {
        let copy = s.cache[0][i].map_or(s.mem[i], |c| c.0);
        let sec = copy[if word == ENTER { SECTION_OF_ENTER } else { SECTION_OF_EXIT }] as u8;
        let Some((first, first_sec)) = s.writer.snap.take() else {
            s.writer.snap = Some((word, sec));
            return Ok(());
        };
        let (enter, exit) = if first == ENTER { (first_sec, sec) } else { (sec, first_sec) };
        if exit > enter {
            return Err(Violation {
                kind: GHOST_SNAPSHOT,
                detail: format!(
                    "bi_reclaim loaded {} first and paired the enter stamp of the reader's section {enter} \
                     with the exit stamp of its later section {exit}: a snapshot no copy of the timing record \
                     held",
                    if first == ENTER { "enter" } else { "exit" }
                ),
            });
        }
        Ok(())
    }

    /// Invariants 2 and 3 on a load of the root by the reader.
    fn root_loaded(&self, s: &mut System, v: Word) -> Result<(), Violation> {
        let seq = Self::seq(v);
        let bound = self.period as u16 + self.skew as u16;
        let floor = s
            .root_recent
            .iter()
            .filter(|(_, t)| (s.g as u16) > *t as u16 + bound)
            .map(|x| x.0)
            .max()
            .unwrap_or(0)
            .max(s.root_floor);
        if seq < floor {
            return Err(Violation {
                kind: "staleness",
                detail: format!(
                    "at G={} the reader loads root version {seq}; version {floor} was written back more than \
                     P + D = {bound} ticks ago",
                    s.g
                ),
            });
        }
        if seq < s.reader.seen_root {
            return Err(Violation {
                kind: "order",
                detail: format!("the reader loads root version {seq} after version {}", s.reader.seen_root),
            });
        }
        s.reader.seen_root = seq;
        Ok(())
    }

    /// Whether domain `d` executing `op` now is seen by anything but its
    /// own thread (partial-order reduction): a load another domain's
    /// write-back or an eviction can change, a clock read, a write-back.
    /// Everything else (stores to lines the thread alone writes, fences,
    /// flushes of clean lines, loads of lines only the thread writes, the
    /// writer's clock inside its call) commutes with every other action.
    ///
    /// With `writer_ticks` the writer's clock read in `bi_reclaim` is visible
    /// (a tick may follow it); with `engine_thread` every flush in the
    /// reader's domain is (two threads share that cache: a clean line
    /// flushed by one is missed by the other's next load).
    fn visible(&self, s: &System, d: usize, op: MicroOp) -> bool {
        match op {
            MicroOp::Load { line, .. } => line != MODIFIED && (d == 1 || line == TIME),
            MicroOp::ReadClock => d == 1 || (self.writer_ticks && s.writer.t.call == Some(Call::Reclaim)),
            MicroOp::Clwb { line } | MicroOp::Clflushopt { line } => {
                line != MODIFIED
                    && ((self.engine_thread && d == 1) || s.cache[d][Self::index(line)].is_some_and(|c| c.1))
            }
            _ => false,
        }
    }

    /// Advance thread `who` (0: the writer, 1: the reader, 2: the reader
    /// domain's quiescence thread) by one visible micro-op, then run ahead
    /// over the silent ones that follow, up to the next visible one or the
    /// end of the call.
    fn run(&self, s: &mut System, who: usize) -> Result<(), Violation> {
        let d = who.min(1);
        let mut seen = false;
        loop {
            let (mut t, loaded) = match who {
                0 => (s.writer.t, s.writer.loaded),
                1 => (s.reader.t, s.reader.loaded),
                _ => (s.reader.et, s.reader.eloaded),
            };
            let op = self.rt.next(&mut t, loaded);
            if let MicroOp::Done { ret } = op {
                match who {
                    0 => {
                        s.writer.t = t;
                        s.writer.loaded = None;
                        return self.writer_done(s);
                    }
                    1 => {
                        s.reader.t = t;
                        s.reader.loaded = None;
                        return self.reader_done(s, ret);
                    }
                    _ => {
                        let r = &mut s.reader;
                        (r.et, r.eloaded, r.engine, r.last_engine, r.engine_start) =
                            (t, None, false, r.engine_start, 0);
                        return Ok(());
                    }
                }
            }
            let visible = self.visible(s, d, op);
            if visible && seen {
                return Ok(());
            }
            seen |= visible;
            let v = self.exec(s, d, op)?;
            match who {
                0 => (s.writer.t, s.writer.loaded) = (t, v),
                1 => (s.reader.t, s.reader.loaded) = (t, v),
                _ => (s.reader.et, s.reader.eloaded) = (t, v),
            }
        }
    }

    fn writer_step(&self, s: &mut System) -> Result<(), Violation> {
        if s.writer.t.idle() {
            self.writer_start(s);
        }
        self.run(s, 0)
    }

    fn writer_start(&self, s: &mut System) {
        let w = &mut s.writer;
        if w.phase == WPhase::Alloc && w.free == 0 {
            w.phase = WPhase::Reclaim;
        }
        if w.phase == WPhase::Free && w.old.is_none() {
            w.phase = WPhase::Reclaim;
        }
        let call = match w.phase {
            WPhase::Alloc => {
                let slot = w.free.trailing_zeros() as u8;
                w.free &= !(1 << slot);
                w.gens[slot as usize] += 1;
                w.new = slot;
                Call::Alloc { obj: slot as u32, track: true }
            }
            WPhase::Write => Call::Write { obj: w.new as u32, val: w.gens[w.new as usize] as Word },
            WPhase::Assign => {
                w.seq += 1;
                let tag = (w.seq as u64) << 8 | w.gens[w.new as usize] as u64;
                Call::Assign { ptr: ROOT, val: ptr_word(w.new as u32, tag) }
            }
            WPhase::Free => Call::Free { obj: w.old.unwrap_or(0) as u32 },
            WPhase::Reclaim => {
                w.started = s.g;
                w.clock = s.g as i64 + s.off[0] as i64;
                Call::Reclaim
            }
        };
        if let Call::Free { obj } = call {
            s.freed_at[obj as usize] = Some(s.g);
        }
        s.writer.t.start(call);
    }

    fn writer_done(&self, s: &mut System) -> Result<(), Violation> {
        let w = &mut s.writer;
        w.phase = match w.phase {
            WPhase::Alloc => WPhase::Write,
            WPhase::Write => WPhase::Assign,
            WPhase::Assign => {
                w.old = w.cur;
                w.cur = Some(w.new);
                WPhase::Free
            }
            WPhase::Free => {
                w.old = None;
                WPhase::Reclaim
            }
            WPhase::Reclaim => {
                // invariant 4: with no reader inside, q = clock − P strands nothing old enough
                let outside = w.t.synchronize_bi() == w.clock - self.rt.cfg.period
                    || self.mutant == Some(Mutant::NoPeriodSubtraction);
                let old = self.period as u16 + self.skew as u16;
                if outside {
                    if let Some(slot) =
                        s.freed_at.iter().position(|f| f.is_some_and(|f| f as u16 + old <= w.started as u16))
                    {
                        return Err(Violation {
                            kind: "drain",
                            detail: format!(
                                "bi_reclaim at G={} found no reader inside, yet O{slot}, freed at G={}, stays in \
                                 the freed log",
                                w.started,
                                s.freed_at[slot].unwrap_or(0)
                            ),
                        });
                    }
                }
                w.clock = 0;
                w.started = 0;
                WPhase::Alloc
            }
        };
        Ok(())
    }

    fn reader_step(&self, s: &mut System) -> Result<(), Violation> {
        if s.reader.t.idle() {
            let call = match s.reader.phase {
                RPhase::Enter => Call::Enter,
                RPhase::Deref => Call::Deref { ptr: ROOT, word: 0 },
                RPhase::ReadObj => Call::ReadObj { obj: ptr_obj(s.reader.ptr).unwrap_or(0), lines: 1 },
                RPhase::Exit => Call::Exit,
            };
            s.reader.t.start(call);
        }
        self.run(s, 1)
    }

    fn reader_done(&self, s: &mut System, ret: Option<Word>) -> Result<(), Violation> {
        let r = &mut s.reader;
        if r.engine && !self.engine_thread {
            r.engine = false;
            r.last_engine = r.engine_start;
            r.engine_start = 0;
            return Ok(());
        }
        r.phase = match r.phase {
            RPhase::Enter => RPhase::Deref,
            RPhase::Deref => match ret {
                Some(p) => {
                    r.ptr = p;
                    RPhase::ReadObj
                }
                None => RPhase::Exit,
            },
            RPhase::ReadObj => {
                // invariant 1
                let (slot, want, got) = (ptr_obj(r.ptr).unwrap_or(0), Self::gen(r.ptr), ret.unwrap_or(0));
                if got != want as Word {
                    return Err(Violation {
                        kind: "generation",
                        detail: format!(
                            "the reader dereferenced O{slot} of generation {want} and read the payload of \
                             generation {got}"
                        ),
                    });
                }
                r.ptr = 0;
                RPhase::Exit
            }
            RPhase::Exit => {
                r.exited = true;
                RPhase::Enter
            }
        };
        Ok(())
    }

    /// The reader's own view of its timing record (its cache, else memory).
    fn last_exit(&self, s: &System) -> Word {
        let i = Self::index(TIME);
        s.cache[1][i].map_or(s.mem[i], |c| c.0)[EXIT as usize]
    }

    fn tick(&self, s: &mut System) {
        s.g += 1;
        let bound = self.period as u16 + self.skew as u16;
        let g = s.g;
        let mut floor = s.root_floor;
        s.root_recent.retain(|&(v, t)| {
            let old = g as u16 > t as u16 + bound;
            if old {
                floor = floor.max(v);
            }
            !old
        });
        s.root_floor = floor;
    }
}

impl Protocol for BiRuntimeCheck {
    type Agent = System;
    type Msg = NoMsg;
    type Ghost = NoGhost;
    type Action = Action;

    fn name(&self) -> String {
        let m = self.mutant.and_then(|m| MUTANTS.iter().find(|x| x.1 == m)).map(|m| m.0);
        format!(
            "bi_runtime K={} skew={} P={} H={}{}{}{}{}{}",
            self.slots,
            self.skew,
            self.period,
            self.horizon,
            if self.writer_ticks { " writer_ticks" } else { "" },
            if self.engine_thread { " engine_thread" } else { "" },
            if self.flush_before_writeback { " flush_before_writeback" } else { "" },
            if self.ghost { "" } else { " no_ghost" },
            m.map(|m| format!(" +{m}")).unwrap_or_default()
        )
    }

    fn vc_orders(&self) -> &[ChannelOrder] {
        &[]
    }

    fn initial(&self) -> Vec<(Vec<System>, NoGhost)> {
        let n = self.lines();
        let mut out = Vec::new();
        // shifting both clocks alike changes nothing: one offset is 0
        // skew-ignored is about clocks that differ: equal offsets are the base model
        let differ = self.mutant == Some(Mutant::SkewIgnored);
        for o0 in 0..=self.skew {
            for o1 in (0..=self.skew).filter(|&o1| (o0 == 0 || o1 == 0) && !(differ && o0 == o1)) {
                // the allocator's slots start marked free: memory never handed out looks freed to a reader
                let mut mem = vec![[0; WORDS]; n];
                for m in &mut mem[3..] {
                    m[FREE_MARK as usize] = 1;
                }
                let s = System {
                    g: 0,
                    off: [o0, o1],
                    mem,
                    cache: [vec![None; n], vec![None; n]],
                    writer: Writer {
                        free: ((1u16 << self.slots) - 1) as u8,
                        gens: vec![0; self.slots],
                        ..Writer::default()
                    },
                    reader: Reader::default(),
                    root_recent: Vec::new(),
                    root_floor: 0,
                    freed_at: vec![None; self.slots],
                };
                out.push((vec![s], NoGhost));
            }
        }
        out
    }

    fn on_message(
        &self,
        _: &mut System,
        _: &mut Ctx<NoMsg, NoGhost>,
        _: AgentId,
        msg: NoMsg,
    ) -> Result<Step, Violation> {
        match msg {}
    }

    fn actions(&self, s: &System, _me: AgentId, _ghost: &NoGhost, out: &mut Vec<Action>) {
        let w = &s.writer;
        if !(w.t.idle() && w.phase == WPhase::Alloc && w.seq >= self.allocs) {
            out.push(Action::Writer);
        }
        let r = &s.reader;
        let reader_clock = s.g as Word + s.off[1] as Word;
        // one section per tick: a section's enter reads a later clock than the
        // last exit (the initial record's exit is 0), as rdtsc's reads would
        let on_reader = r.engine && !self.engine_thread;
        let same_tick = r.t.idle() && !on_reader && r.phase == RPhase::Enter && reader_clock <= self.last_exit(s);
        if !same_tick || self.same_tick {
            out.push(Action::Reader);
        }
        if self.engine_thread {
            // the quiescence thread: an engine at any time, one at a time
            out.push(if r.engine { Action::EngineStep } else { Action::Engine });
        } else if r.t.idle() && !r.engine {
            // reader_engine between any two of the reader's calls, inside a section too
            out.push(Action::Engine);
        }
        // urgency: the last completed engine began less than P ticks before the next instant;
        // no tick inside a writer's call, except inside bi_reclaim with writer_ticks
        let writer_between = s.writer.t.idle() || (self.writer_ticks && s.writer.t.call == Some(Call::Reclaim));
        if s.g < self.horizon && writer_between && (s.g as u16 + 1) < r.last_engine as u16 + self.period as u16 {
            out.push(Action::Tick);
        }
        // the reader's domain: an object line evicted or prefetched, a dirty
        // timing record written back early (its freed log line is always
        // flushed before it is read; a clean copy of a line the reader alone
        // writes is what memory holds; the root is refreshed by the engine
        // and the NULL retry only: an eviction would only make it fresher)
        for (i, c) in s.cache[1].iter().enumerate() {
            let line = Self::line_of(i);
            match c {
                Some((_, dirty)) if line >= OBJ || *dirty => out.push(Action::Evict { dom: 1, line: line as u8 }),
                None if line >= OBJ => out.push(Action::Prefetch { dom: 1, line: line as u8 }),
                _ => {}
            }
        }
        // the writer's copy of the timing record matters between its two loads
        // (a prefetch before them is the same as loading earlier)
        if s.cache[0][Self::index(TIME)].is_some() && s.writer.t.call == Some(Call::Reclaim) {
            out.push(Action::Evict { dom: 0, line: TIME as u8 });
        }
    }

    fn act(&self, s: &mut System, _ctx: &mut Ctx<NoMsg, NoGhost>, action: Action) -> Result<(), Violation> {
        match action {
            Action::Writer => self.writer_step(s),
            Action::Reader => self.reader_step(s),
            Action::Engine => {
                s.reader.engine = true;
                s.reader.engine_start = s.g;
                let call = Call::Quiesce { free: true, stale: true };
                if self.engine_thread {
                    s.reader.et.start(call);
                    return self.run(s, 2);
                }
                s.reader.t.start(call);
                self.run(s, 1)
            }
            Action::EngineStep => self.run(s, 2),
            Action::Tick => {
                self.tick(s);
                Ok(())
            }
            Action::Evict { dom, line } => {
                let i = Self::index(line as u64);
                if let Some((v, dirty)) = s.cache[dom as usize][i].take() {
                    if dirty {
                        self.write_back(s, i, v)?;
                    }
                }
                Ok(())
            }
            Action::Prefetch { dom, line } => {
                self.fill(s, dom as usize, line as u64);
                Ok(())
            }
        }
    }

    fn is_environment(&self, a: &Action) -> bool {
        matches!(a, Action::Evict { .. } | Action::Prefetch { .. })
    }

    fn invariant(&self, _agents: &[System], _ghost: &NoGhost) -> Result<(), (String, String)> {
        Ok(())
    }

    fn busy(&self, _agent: &System) -> bool {
        false
    }

    fn agent_name(&self, _id: AgentId) -> String {
        "bi".into()
    }
}

impl fmt::Display for Action {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{self:?}")
    }
}

// ------------------------------------------------------------ packing

crate::pack_struct!(Writer { t, loaded, phase, free, cur, new, old, gens, seq, started, clock, snap });
crate::pack_struct!(Reader {
    t,
    loaded,
    phase,
    ptr,
    engine,
    engine_start,
    last_engine,
    seen_root,
    exited,
    et,
    eloaded
});

impl Pack for System {
    fn pack(&self, out: &mut Vec<u8>) {
        self.g.pack(out);
        self.off.pack(out);
        self.mem.pack(out);
        self.cache[0].pack(out);
        self.cache[1].pack(out);
        self.writer.pack(out);
        self.reader.pack(out);
        self.root_recent.pack(out);
        self.root_floor.pack(out);
        self.freed_at.pack(out);
    }
    fn unpack(src: &mut &[u8]) -> Self {
        System {
            g: Pack::unpack(src),
            off: Pack::unpack(src),
            mem: Pack::unpack(src),
            cache: [Pack::unpack(src), Pack::unpack(src)],
            writer: Pack::unpack(src),
            reader: Pack::unpack(src),
            root_recent: Pack::unpack(src),
            root_floor: Pack::unpack(src),
            freed_at: Pack::unpack(src),
        }
    }
}

/// The checker's system has no messages and no ghost outside its agent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum NoMsg {}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct NoGhost;

impl Pack for NoMsg {
    fn pack(&self, _: &mut Vec<u8>) {
        match *self {}
    }
    fn unpack(src: &mut &[u8]) -> Self {
        panic!("bi_runtime has no messages (byte {})", get_byte(src))
    }
}

impl Pack for NoGhost {
    fn pack(&self, _: &mut Vec<u8>) {}
    fn unpack(_: &mut &[u8]) -> Self {
        NoGhost
    }
}
