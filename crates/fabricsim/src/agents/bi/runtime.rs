//! The BI runtime of the paper's Figs 7–9 as a deterministic state machine
//! (docs/design/bi.md §3.4, slice 3): one BI call at a time is expanded
//! into the micro-ops a core executes (load, store, clflushopt, clwb,
//! mfence, prefetch, read-clock), one micro-op per [`Runtime::next`], and
//! the machine branches on the values its loads return: the NULL retry of
//! `bi_dereference` (lazy invalidation), its `free_mark` check, the log
//! `head`/`tail` walks, `time_quiescence`'s exit-then-enter order and
//! `bi_reclaim`'s FIFO stop.
//!
//! Nothing here knows a protocol: the caller executes each micro-op on
//! whatever memory it models (the checker's one-cache domains in
//! `check.rs`; later the timed cores) and hands back the value of a load or
//! of the clock. So the runtime the checker verifies is the one that will
//! be timed (DESIGN principle 1).
//!
//! Memory layout of BI's metadata ([`Layout`]), in lines of
//! [`WORDS_PER_LINE`] words:
//! - an object `o` of `obj_lines` lines at `obj_base + o * obj_lines`; its
//!   first line starts with the header `{logged_time, log_flag, free_mark}`
//!   (Fig 7; `sz` is the layout's fixed `obj_lines`) then the payload;
//! - `reader_time[r] = {enter, exit}` on a line of its own per reader (a
//!   padded `timing_info`: two readers sharing a line would undo each
//!   other's deferred write-backs);
//! - per writer `w` the `freed[w]` and `modified[w]` logs `{head, tail,
//!   records[log_cap]}`, each from a line of its own. `head` and `tail`
//!   count records for ever; record `i` sits at slot `i % log_cap`.
//!
//! Pointer words: 0 is NULL; otherwise the low 32 bits are `object + 1`
//! and the bits above are an opaque tag the runtime never reads (the
//! checker puts its ghost version there).

use crate::engine::pack::{get_byte, Pack};

pub type Word = u64;

/// Words per line (64-byte lines of 8-byte words).
pub const WORDS_PER_LINE: u64 = 8;

/// Header and payload words of an object's first line (Fig 7).
pub const LOGGED_TIME: u8 = 0;
pub const LOG_FLAG: u8 = 1;
pub const FREE_MARK: u8 = 2;
pub const PAYLOAD: u8 = 3;
/// `timing_info` words.
pub const ENTER: u8 = 0;
pub const EXIT: u8 = 1;
/// `log_buffer` words (records follow).
pub const HEAD: u8 = 0;
pub const TAIL: u8 = 1;
const RECORDS: u64 = 2;

/// A pointer word to object `obj` carrying `tag` (opaque to the runtime).
pub fn ptr_word(obj: u32, tag: u64) -> Word {
    (obj as u64 + 1) | tag << 32
}

/// The object a pointer word points to (None: NULL).
pub fn ptr_obj(w: Word) -> Option<u32> {
    match w & 0xFFFF_FFFF {
        0 => None,
        o => Some(o as u32 - 1),
    }
}

/// The tag of a pointer word.
pub fn ptr_tag(w: Word) -> u64 {
    w >> 32
}

/// Where BI's metadata and objects live, in line addresses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Layout {
    pub readers: u8,
    pub writers: u8,
    /// Records per log buffer.
    pub log_cap: u32,
    pub obj_base: u64,
    /// Lines per object (`sz`; the same for every object).
    pub obj_lines: u32,
    pub reader_time_base: u64,
    pub freed_base: u64,
    pub modified_base: u64,
    /// The `modified` logs are fixed: they already hold every BI pointer
    /// and `bi_assign_pointer` appends nothing (the checker's one pointer,
    /// which every assignment would log again; Fig 9 never dequeues
    /// `modified`, so a ring would only wrap).
    pub modified_fixed: bool,
}

impl Layout {
    /// Lines of one log buffer.
    pub fn log_lines(&self) -> u64 {
        (RECORDS + self.log_cap as u64).div_ceil(WORDS_PER_LINE)
    }
    pub fn obj_line(&self, obj: u32) -> u64 {
        self.obj_base + obj as u64 * self.obj_lines as u64
    }
    pub fn reader_time(&self, r: u8) -> u64 {
        self.reader_time_base + r as u64
    }
    pub fn log(&self, freed: bool, w: u8) -> u64 {
        let base = if freed { self.freed_base } else { self.modified_base };
        base + w as u64 * self.log_lines()
    }
    /// The (line, word) of record `i` of a log that starts at `log`.
    pub fn record(&self, log: u64, i: u64) -> (u64, u8) {
        let k = RECORDS + i % self.log_cap.max(1) as u64;
        (log + k / WORDS_PER_LINE, (k % WORDS_PER_LINE) as u8)
    }
}

/// Deliberately broken runtimes the checker must catch (§3.5).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RtMutant {
    /// `time_quiescence` loads `enter`, then `exit` (Fig 9 lines 16–17
    /// swapped).
    EnterBeforeExit,
    /// `bi_dereference` skips Fig 8 line 14 (the `free_mark` check).
    NoFreeMarkCheck,
    /// `cache_quiescence(t) = t` (Fig 9 line 23 without the period).
    NoPeriodSubtraction,
}

/// The runtime's options.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RtConfig {
    /// Reader timing records are written back by `reader_engine` only
    /// (§5.2's optimisation); off: `bi_enter`/`bi_exit` write back (clwb +
    /// mfence) at once (Table 1A's "non-opt").
    pub deferred_writeback: bool,
    /// `CACHE_QUIESCENCE_PERIOD`, in ticks of the logical clock.
    pub period: i64,
    /// The skew margin `D` (§5.1), in ticks: a record logged at `t` is
    /// reclaimed only when `t + D <= q`.
    pub d: i64,
    pub mutant: Option<RtMutant>,
    /// `reader_engine` writes the timing record back *after* both log
    /// invalidations and their fences, instead of first as Fig 8 line 42
    /// does: a record that says "outside" is then published only after the
    /// stale root is flushed (docs/design/bi.md §7, the separate quiescence
    /// thread).
    pub writeback_after_flush: bool,
}

impl Default for RtConfig {
    fn default() -> Self {
        RtConfig { deferred_writeback: true, period: 1, d: 0, mutant: None, writeback_after_flush: false }
    }
}

/// A coherence domain's logical clock (§5.1, design §3.3): the same rate
/// everywhere, its own offset; `cur_time() = floor((now + offset) / tick)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DomainClock {
    pub offset: u64,
    pub tick: u64,
}

impl DomainClock {
    pub fn read(&self, now: u64) -> Word {
        (now + self.offset) / self.tick.max(1)
    }
}

/// One BI call (§4.1's API and what an application does between them).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Call {
    /// `bi_enter`.
    Enter,
    /// `bi_exit`.
    Exit,
    /// `bi_dereference` of the pointer in word `word` of line `ptr`:
    /// returns the pointer word (None: NULL).
    Deref {
        ptr: u64,
        word: u8,
    },
    /// Read the payload of `lines` lines of `obj`: returns the first line's.
    ReadObj {
        obj: u32,
        lines: u32,
    },
    /// `bi_assign_pointer(ptr, val)`.
    Assign {
        ptr: u64,
        val: Word,
    },
    /// `bi_alloc(sz, track)` of object `obj` (the caller's allocator picks it).
    Alloc {
        obj: u32,
        track: bool,
    },
    /// The application writes `val` as `obj`'s payload and writes it back.
    Write {
        obj: u32,
        val: Word,
    },
    /// `bi_free(obj)`.
    Free {
        obj: u32,
    },
    /// `bi_reclaim()`: emits [`MicroOp::Reclaimed`] per object it frees.
    Reclaim,
    /// One `reader_engine` (Fig 8 lines 41–45): the free and/or stale
    /// quiescence.
    Quiesce {
        free: bool,
        stale: bool,
    },
    Compute {
        ns: u64,
    },
}

/// What a thread asks its core to do next.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MicroOp {
    /// Load a word: hand its value to the next [`Runtime::next`].
    Load {
        line: u64,
        word: u8,
    },
    Store {
        line: u64,
        word: u8,
        val: Word,
    },
    Clflushopt {
        line: u64,
    },
    Clwb {
        line: u64,
    },
    Mfence,
    /// An atomic exchange of a word (`xchg`): its old value goes to the
    /// next [`Runtime::next`]. Applications' locks (U-RCU's); the BI
    /// runtime never emits it.
    Swap {
        line: u64,
        word: u8,
        val: Word,
    },
    Prefetch {
        line: u64,
    },
    /// `cur_time()`: hand the domain's clock to the next [`Runtime::next`].
    ReadClock,
    Compute {
        ns: u64,
    },
    /// `free(h)` in `bi_reclaim`: the object goes back to the allocator.
    Reclaimed {
        obj: u32,
    },
    /// The call is over, with its result (`Deref`, `ReadObj`).
    Done {
        ret: Option<Word>,
    },
}

/// One thread's runtime state: the call in progress and where it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Thread {
    /// Reader index (reader calls) or writer index (writer calls).
    pub me: u8,
    pub call: Option<Call>,
    pc: u8,
    /// A loaded word kept across micro-ops (the pointer, a log's tail).
    a: Word,
    /// `time_quiescence`'s q, then `synchronize_bi`'s.
    q: i64,
    /// Loop position (record index, line index) and its end.
    i: u64,
    end: u64,
    /// Reader or writer being walked.
    k: u8,
    /// Whether `bi_reclaim` dequeued anything (its head must be written back).
    moved: bool,
}

impl Thread {
    pub fn new(me: u8) -> Self {
        Thread { me, ..Thread::default() }
    }
    pub fn idle(&self) -> bool {
        self.call.is_none()
    }
    /// Begin `call`; the first micro-op comes from the next [`Runtime::next`].
    pub fn start(&mut self, call: Call) {
        *self = Thread { me: self.me, call: Some(call), ..Thread::default() };
    }
    /// `synchronize_bi()`'s value once `bi_reclaim` has computed it.
    pub fn synchronize_bi(&self) -> i64 {
        self.q
    }
    /// Whether the next [`Runtime::next`] reads the word of the load the
    /// thread just emitted. Only `ReadObj`'s lines after the first are
    /// loaded for nothing but bringing the object in (its result is the
    /// first line's word), so an out-of-order core need not wait for them
    /// (`front.rs`). Conservative: every other load's word is read.
    pub fn uses_loaded(&self) -> bool {
        !matches!(self.call, Some(Call::ReadObj { .. }) if self.i >= 2)
    }
}

/// The runtime: its layout and options; each thread's state is a [`Thread`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Runtime {
    pub layout: Layout,
    pub cfg: RtConfig,
}

// Program counters shared by the log walks of reader_engine.
const END: u8 = 250;
// reader_engine's write-back when it comes last (`writeback_after_flush`).
const WRITEBACK_LAST: u8 = 251;

impl Runtime {
    /// The thread's next micro-op. `loaded` is the value of the previous
    /// micro-op if it was a load or a clock read (None otherwise). After
    /// [`MicroOp::Done`] the thread is idle.
    pub fn next(&self, t: &mut Thread, loaded: Option<Word>) -> MicroOp {
        let Some(call) = t.call else { return MicroOp::Done { ret: None } };
        let v = loaded.unwrap_or(0);
        match call {
            Call::Enter | Call::Exit => self.enter_exit(t, call == Call::Enter, v),
            Call::Deref { ptr, word } => self.deref(t, ptr, word, v),
            Call::ReadObj { obj, lines } => {
                if t.pc == 0 {
                    t.end = lines.max(1) as u64;
                    t.pc = 1;
                } else if t.i == 1 {
                    t.a = v;
                }
                if t.i < t.end {
                    t.i += 1;
                    MicroOp::Load { line: self.layout.obj_line(obj) + t.i - 1, word: PAYLOAD }
                } else {
                    self.done(t, Some(t.a))
                }
            }
            Call::Assign { ptr, val } => self.assign(t, ptr, val, v),
            Call::Alloc { obj, track } => {
                let line = self.layout.obj_line(obj);
                t.pc += 1;
                match t.pc {
                    1 => MicroOp::Store { line, word: LOG_FLAG, val: track as Word },
                    2 => MicroOp::Clwb { line },
                    _ => self.done(t, None),
                }
            }
            Call::Write { obj, val } => {
                let line = self.layout.obj_line(obj);
                t.pc += 1;
                match t.pc {
                    1 => MicroOp::Store { line, word: PAYLOAD, val },
                    2 => MicroOp::Store { line, word: FREE_MARK, val: 0 },
                    3 => MicroOp::Clwb { line },
                    _ => self.done(t, None),
                }
            }
            Call::Free { obj } => self.free(t, obj, v),
            Call::Reclaim => self.reclaim(t, v),
            Call::Quiesce { free, stale } => self.quiesce(t, free, stale, v),
            Call::Compute { ns } => {
                t.pc += 1;
                if t.pc == 1 {
                    MicroOp::Compute { ns }
                } else {
                    self.done(t, None)
                }
            }
        }
    }

    fn done(&self, t: &mut Thread, ret: Option<Word>) -> MicroOp {
        t.call = None;
        MicroOp::Done { ret }
    }

    /// Fig 8 lines 1–9; without deferred write-back the record is written
    /// back at once (clwb + mfence), as the paper's first implementation.
    fn enter_exit(&self, t: &mut Thread, enter: bool, v: Word) -> MicroOp {
        let line = self.layout.reader_time(t.me);
        let deferred = self.cfg.deferred_writeback;
        t.pc += 1;
        match (t.pc, enter, deferred) {
            (1, _, _) => MicroOp::ReadClock,
            (2, _, _) => MicroOp::Store { line, word: if enter { ENTER } else { EXIT }, val: v },
            (3, _, false) => MicroOp::Clwb { line },
            // bi_enter's mem_barrier: the enter store is in the cache before the section's loads
            (3, true, true) | (4, _, false) => MicroOp::Mfence,
            _ => self.done(t, None),
        }
    }

    /// Fig 8 lines 10–16.
    fn deref(&self, t: &mut Thread, ptr: u64, word: u8, v: Word) -> MicroOp {
        loop {
            match t.pc {
                0 => {
                    t.pc = 1;
                    return MicroOp::Load { line: ptr, word };
                }
                1 if ptr_obj(v).is_none() => {
                    // lazy invalidation: a failed resolution retries from memory
                    t.pc = 2;
                    return MicroOp::Clflushopt { line: ptr };
                }
                2 => {
                    t.pc = 3;
                    return MicroOp::Load { line: ptr, word };
                }
                3 if ptr_obj(v).is_none() => return self.done(t, None),
                1 | 3 => {
                    t.a = v;
                    if self.cfg.mutant == Some(RtMutant::NoFreeMarkCheck) {
                        return self.done(t, Some(v));
                    }
                    t.pc = 4;
                    let obj = ptr_obj(v).unwrap_or(0);
                    return MicroOp::Load { line: self.layout.obj_line(obj), word: FREE_MARK };
                }
                4 => {
                    if v == 0 {
                        return self.done(t, Some(t.a));
                    }
                    // a marked header: the line may be a prefetched copy of freed memory
                    t.pc = 5;
                    t.i = 0;
                    t.end = self.layout.obj_lines as u64;
                }
                5 if t.i < t.end => {
                    t.i += 1;
                    let obj = ptr_obj(t.a).unwrap_or(0);
                    return MicroOp::Clflushopt { line: self.layout.obj_line(obj) + t.i - 1 };
                }
                _ => return self.done(t, Some(t.a)),
            }
        }
    }

    /// Fig 9 lines 1–10.
    fn assign(&self, t: &mut Thread, ptr: u64, val: Word, v: Word) -> MicroOp {
        let l = &self.layout;
        loop {
            match t.pc {
                0 => {
                    t.pc = 1;
                    return MicroOp::Load { line: ptr, word: 0 };
                }
                1 => match ptr_obj(v) {
                    Some(old) => {
                        t.a = old as Word;
                        t.pc = 2;
                        return MicroOp::Load { line: l.obj_line(old), word: LOG_FLAG };
                    }
                    None => t.pc = 10,
                },
                2 if v != 0 => {
                    t.pc = 3;
                    return MicroOp::ReadClock;
                }
                2 => t.pc = 10,
                3 => {
                    t.pc = if l.modified_fixed { 10 } else { 4 };
                    return MicroOp::Store { line: l.obj_line(t.a as u32), word: LOGGED_TIME, val: v };
                }
                4 => {
                    t.pc = 5;
                    return MicroOp::Load { line: l.log(false, t.me), word: TAIL };
                }
                5 => {
                    t.i = v;
                    t.pc = 6;
                    let (line, word) = l.record(l.log(false, t.me), v);
                    return MicroOp::Store { line, word, val: ptr };
                }
                6 => {
                    t.pc = 7;
                    return MicroOp::Store { line: l.log(false, t.me), word: TAIL, val: t.i + 1 };
                }
                7 => {
                    // logs are "written back immediately when logged" (§5.2)
                    t.pc = 10;
                    return self.flush_log(t, false, true);
                }
                10 => {
                    t.pc = 11;
                    return MicroOp::Store { line: ptr, word: 0, val };
                }
                11 => {
                    t.pc = 12;
                    return MicroOp::Clwb { line: ptr };
                }
                12 => {
                    t.pc = 13;
                    return MicroOp::Mfence;
                }
                _ => return self.done(t, None),
            }
        }
    }

    /// The whole log buffer `t.me`'s, line by line (one micro-op; the
    /// checker's logs have one line, larger ones are walked by `quiesce`).
    fn flush_log(&self, t: &Thread, freed: bool, clwb: bool) -> MicroOp {
        let line = self.layout.log(freed, t.me);
        if clwb {
            MicroOp::Clwb { line }
        } else {
            MicroOp::Clflushopt { line }
        }
    }

    /// Fig 9 lines 37–43.
    fn free(&self, t: &mut Thread, obj: u32, v: Word) -> MicroOp {
        let l = &self.layout;
        let line = l.obj_line(obj);
        let log = l.log(true, t.me);
        t.pc += 1;
        match t.pc {
            1 => MicroOp::Store { line, word: FREE_MARK, val: 1 },
            2 => MicroOp::ReadClock,
            3 => MicroOp::Store { line, word: LOGGED_TIME, val: v },
            4 => MicroOp::Clwb { line },
            5 => MicroOp::Load { line: log, word: TAIL },
            6 => {
                t.i = v;
                let (line, word) = l.record(log, v);
                MicroOp::Store { line, word, val: obj as Word }
            }
            7 => MicroOp::Store { line: log, word: TAIL, val: t.i + 1 },
            8 => self.flush_log(t, true, true),
            _ => self.done(t, None),
        }
    }

    /// Fig 9 lines 11–28 and 44–56: `q = synchronize_bi()`, then free the
    /// freed log's records in FIFO order while `logged_time + D <= q`.
    fn reclaim(&self, t: &mut Thread, v: Word) -> MicroOp {
        let l = &self.layout;
        let log = l.log(true, t.me);
        let swap = self.cfg.mutant == Some(RtMutant::EnterBeforeExit);
        let (first, second) = if swap { (ENTER, EXIT) } else { (EXIT, ENTER) };
        loop {
            match t.pc {
                0 => {
                    t.pc = 1;
                    return MicroOp::ReadClock;
                }
                1 => {
                    t.q = v as i64;
                    t.k = 0;
                    t.pc = 2;
                }
                // clflushopt(reader_time, sizeof(reader_time)); mem_barrier()
                2 if t.k < l.readers => {
                    t.k += 1;
                    return MicroOp::Clflushopt { line: l.reader_time(t.k - 1) };
                }
                2 => {
                    t.k = 0;
                    t.pc = 3;
                    return MicroOp::Mfence;
                }
                3 if t.k < l.readers => {
                    t.pc = 4;
                    return MicroOp::Load { line: l.reader_time(t.k), word: first };
                }
                3 => {
                    if self.cfg.mutant != Some(RtMutant::NoPeriodSubtraction) {
                        t.q -= self.cfg.period;
                    }
                    t.pc = 6;
                    // the writer's own freed log, then its records
                    return MicroOp::Clflushopt { line: log };
                }
                4 => {
                    t.a = v;
                    t.pc = 5;
                    return MicroOp::Load { line: l.reader_time(t.k), word: second };
                }
                5 => {
                    let (exit, enter) = if swap { (v, t.a) } else { (t.a, v) };
                    // exit < enter: the reader is inside a section it entered at `enter`
                    if exit < enter {
                        t.q = t.q.min(enter as i64);
                    }
                    t.k += 1;
                    t.pc = 3;
                }
                6 => {
                    t.pc = 7;
                    return MicroOp::Load { line: log, word: HEAD };
                }
                7 => {
                    t.i = v;
                    t.pc = 8;
                    return MicroOp::Load { line: log, word: TAIL };
                }
                8 => {
                    t.end = v;
                    t.pc = 9;
                }
                9 if t.i < t.end => {
                    t.pc = 10;
                    let (line, word) = l.record(log, t.i);
                    return MicroOp::Load { line, word };
                }
                9 => {
                    t.pc = END;
                    if t.moved {
                        return self.flush_log(t, true, true);
                    }
                }
                10 => {
                    t.a = v;
                    t.pc = 11;
                    return MicroOp::Load { line: l.obj_line(v as u32), word: LOGGED_TIME };
                }
                11 => {
                    if v as i64 + self.cfg.d > t.q {
                        // FIFO: every later record was logged no earlier
                        t.pc = 9;
                        t.end = t.i;
                        continue;
                    }
                    t.pc = 12;
                    return MicroOp::Reclaimed { obj: t.a as u32 };
                }
                12 => {
                    t.i += 1;
                    t.moved = true;
                    t.pc = 9;
                    return MicroOp::Store { line: log, word: HEAD, val: t.i };
                }
                _ => return self.done(t, None),
            }
        }
    }

    /// Fig 8 lines 17–45: `writeback(&reader_time[me])`, then
    /// `invalidate_log_buffer(freed)`, then `invalidate_log_buffer(modified)`.
    fn quiesce(&self, t: &mut Thread, free: bool, stale: bool, v: Word) -> MicroOp {
        let l = &self.layout;
        // pc 0: the write-back; 1: which log; 2..: walking one kind of log
        loop {
            match t.pc {
                0 => {
                    t.pc = 1;
                    t.moved = free; // the freed log is still to walk
                    if !self.cfg.writeback_after_flush {
                        return MicroOp::Clwb { line: l.reader_time(t.me) };
                    }
                }
                1 => {
                    // `moved` marks the freed pass pending, `a` which kind is walking
                    if t.moved {
                        t.moved = false;
                        t.a = 1;
                    } else if stale && t.a != 2 {
                        t.a = 2;
                    } else if self.cfg.writeback_after_flush {
                        // after the last pass's mfence: x86 orders clwb after it
                        t.pc = WRITEBACK_LAST;
                        return MicroOp::Clwb { line: l.reader_time(t.me) };
                    } else {
                        return self.done(t, None);
                    }
                    t.k = 0;
                    t.i = 0;
                    t.pc = 2;
                }
                // clflushopt(&buf[w], sizeof(struct log_buffer)) for every writer
                2 => {
                    let lines = l.writers as u64 * l.log_lines();
                    if t.i < lines {
                        t.i += 1;
                        return MicroOp::Clflushopt { line: l.log(t.a == 1, 0) + t.i - 1 };
                    }
                    t.pc = 3;
                    return MicroOp::Mfence;
                }
                // invalidate_stale_obj(&buf[w]) for every writer
                3 if t.k < l.writers => {
                    t.pc = 4;
                    return MicroOp::Load { line: l.log(t.a == 1, t.k), word: HEAD };
                }
                3 => {
                    t.pc = 1;
                    return MicroOp::Mfence;
                }
                4 => {
                    t.i = v;
                    t.pc = 5;
                    return MicroOp::Load { line: l.log(t.a == 1, t.k), word: TAIL };
                }
                5 => {
                    t.end = v;
                    // a ring holds its last `log_cap` records: older slots were written over
                    t.i = t.i.max(t.end.saturating_sub(l.log_cap as u64));
                    t.pc = 6;
                }
                6 if t.i < t.end => {
                    t.pc = 7;
                    let (line, word) = l.record(l.log(t.a == 1, t.k), t.i);
                    return MicroOp::Load { line, word };
                }
                6 => {
                    t.k += 1;
                    t.pc = 3;
                }
                7 => {
                    t.i += 1;
                    t.pc = 6;
                    // a freed record names an object, a modified one a pointer's line
                    let line = if t.a == 1 { l.obj_line(v as u32) } else { v };
                    return MicroOp::Clflushopt { line };
                }
                _ => return self.done(t, None),
            }
        }
    }
}

// ------------------------------------------------------------ packing

impl Pack for Call {
    fn pack(&self, out: &mut Vec<u8>) {
        match *self {
            Call::Enter => out.push(0),
            Call::Exit => out.push(1),
            Call::Deref { ptr, word } => {
                out.push(2);
                ptr.pack(out);
                word.pack(out);
            }
            Call::ReadObj { obj, lines } => {
                out.push(3);
                obj.pack(out);
                lines.pack(out);
            }
            Call::Assign { ptr, val } => {
                out.push(4);
                ptr.pack(out);
                val.pack(out);
            }
            Call::Alloc { obj, track } => {
                out.push(5);
                obj.pack(out);
                track.pack(out);
            }
            Call::Write { obj, val } => {
                out.push(6);
                obj.pack(out);
                val.pack(out);
            }
            Call::Free { obj } => {
                out.push(7);
                obj.pack(out);
            }
            Call::Reclaim => out.push(8),
            Call::Quiesce { free, stale } => {
                out.push(9);
                free.pack(out);
                stale.pack(out);
            }
            Call::Compute { ns } => {
                out.push(10);
                ns.pack(out);
            }
        }
    }
    fn unpack(src: &mut &[u8]) -> Self {
        match get_byte(src) {
            0 => Call::Enter,
            1 => Call::Exit,
            2 => Call::Deref { ptr: Pack::unpack(src), word: Pack::unpack(src) },
            3 => Call::ReadObj { obj: Pack::unpack(src), lines: Pack::unpack(src) },
            4 => Call::Assign { ptr: Pack::unpack(src), val: Pack::unpack(src) },
            5 => Call::Alloc { obj: Pack::unpack(src), track: Pack::unpack(src) },
            6 => Call::Write { obj: Pack::unpack(src), val: Pack::unpack(src) },
            7 => Call::Free { obj: Pack::unpack(src) },
            8 => Call::Reclaim,
            9 => Call::Quiesce { free: Pack::unpack(src), stale: Pack::unpack(src) },
            10 => Call::Compute { ns: Pack::unpack(src) },
            b => panic!("{b} is not a packed BI call"),
        }
    }
}

crate::pack_struct!(Thread { me, call, pc, a, q, i, end, k, moved });

#[cfg(test)]
mod tests {
    use super::*;

    fn layout() -> Layout {
        Layout {
            readers: 1,
            writers: 1,
            log_cap: 4,
            obj_base: 10,
            obj_lines: 1,
            reader_time_base: 1,
            freed_base: 2,
            modified_base: 3,
            modified_fixed: false,
        }
    }

    /// Runs `call` to its end, answering loads from `mem` ((line, word) →
    /// value, 0 if absent) and the clock with `clock`; stores go to `mem`.
    fn trace(rt: &Runtime, call: Call, mem: &mut Vec<((u64, u8), Word)>, clock: Word) -> Vec<MicroOp> {
        let mut t = Thread::new(0);
        t.start(call);
        let mut out = Vec::new();
        let mut loaded = None;
        loop {
            let op = rt.next(&mut t, loaded);
            out.push(op);
            loaded = match op {
                MicroOp::Load { line, word } => {
                    Some(mem.iter().find(|(a, _)| *a == (line, word)).map(|x| x.1).unwrap_or(0))
                }
                MicroOp::Store { line, word, val } => {
                    mem.retain(|(a, _)| *a != (line, word));
                    mem.push(((line, word), val));
                    None
                }
                MicroOp::ReadClock => Some(clock),
                MicroOp::Done { .. } => break,
                _ => None,
            };
            assert!(out.len() < 100, "{call:?} does not end: {out:?}");
        }
        assert!(t.idle());
        out
    }

    fn rt(deferred: bool) -> Runtime {
        Runtime {
            layout: layout(),
            cfg: RtConfig { deferred_writeback: deferred, period: 2, d: 1, ..RtConfig::default() },
        }
    }

    use MicroOp::*;

    #[test]
    fn enter_and_exit_write_back_only_without_deferral() {
        let mut m = Vec::new();
        assert_eq!(
            trace(&rt(true), Call::Enter, &mut m, 7),
            [ReadClock, Store { line: 1, word: ENTER, val: 7 }, Mfence, Done { ret: None }]
        );
        assert_eq!(
            trace(&rt(true), Call::Exit, &mut m, 8),
            [ReadClock, Store { line: 1, word: EXIT, val: 8 }, Done { ret: None }]
        );
        assert_eq!(
            trace(&rt(false), Call::Enter, &mut m, 7),
            [ReadClock, Store { line: 1, word: ENTER, val: 7 }, Clwb { line: 1 }, Mfence, Done { ret: None }]
        );
        assert_eq!(
            trace(&rt(false), Call::Exit, &mut m, 8),
            [ReadClock, Store { line: 1, word: EXIT, val: 8 }, Clwb { line: 1 }, Mfence, Done { ret: None }]
        );
    }

    #[test]
    fn dereference_retries_null_after_invalidating_and_flushes_a_marked_object() {
        let mut m = Vec::new();
        let r = rt(true);
        assert_eq!(
            trace(&r, Call::Deref { ptr: 0, word: 0 }, &mut m, 0),
            [Load { line: 0, word: 0 }, Clflushopt { line: 0 }, Load { line: 0, word: 0 }, Done { ret: None }]
        );
        let p = ptr_word(2, 5);
        let mut m = vec![((0, 0), p)];
        assert_eq!(
            trace(&r, Call::Deref { ptr: 0, word: 0 }, &mut m, 0),
            [Load { line: 0, word: 0 }, Load { line: 12, word: FREE_MARK }, Done { ret: Some(p) }]
        );
        m.push(((12, FREE_MARK), 1));
        assert_eq!(
            trace(&r, Call::Deref { ptr: 0, word: 0 }, &mut m, 0),
            [
                Load { line: 0, word: 0 },
                Load { line: 12, word: FREE_MARK },
                Clflushopt { line: 12 },
                Done { ret: Some(p) }
            ]
        );
        let no_check = Runtime { cfg: RtConfig { mutant: Some(RtMutant::NoFreeMarkCheck), ..r.cfg }, ..r };
        assert_eq!(
            trace(&no_check, Call::Deref { ptr: 0, word: 0 }, &mut m, 0),
            [Load { line: 0, word: 0 }, Done { ret: Some(p) }]
        );
    }

    #[test]
    fn assign_logs_the_old_object_then_stores_writes_back_and_fences() {
        let r = rt(true);
        let old = ptr_word(1, 0);
        let mut m = vec![((0, 0), old), ((11, LOG_FLAG), 1), ((3, TAIL), 2)];
        let new = ptr_word(2, 0);
        assert_eq!(
            trace(&r, Call::Assign { ptr: 0, val: new }, &mut m, 9),
            [
                Load { line: 0, word: 0 },
                Load { line: 11, word: LOG_FLAG },
                ReadClock,
                Store { line: 11, word: LOGGED_TIME, val: 9 },
                Load { line: 3, word: TAIL },
                Store { line: 3, word: 4, val: 0 },
                Store { line: 3, word: TAIL, val: 3 },
                Clwb { line: 3 },
                Store { line: 0, word: 0, val: new },
                Clwb { line: 0 },
                Mfence,
                Done { ret: None }
            ]
        );
        // an untracked old object is not logged; a fixed modified log takes no record
        let fixed = Runtime { layout: Layout { modified_fixed: true, ..r.layout }, ..r };
        let mut m = vec![((0, 0), old), ((11, LOG_FLAG), 1)];
        let ops = trace(&fixed, Call::Assign { ptr: 0, val: new }, &mut m, 9);
        assert_eq!(ops[3], Store { line: 11, word: LOGGED_TIME, val: 9 });
        assert_eq!(ops[4], Store { line: 0, word: 0, val: new });
    }

    #[test]
    fn alloc_write_and_free_write_back_the_header_before_logging() {
        let r = rt(true);
        let mut m = Vec::new();
        assert_eq!(
            trace(&r, Call::Alloc { obj: 1, track: true }, &mut m, 0),
            [Store { line: 11, word: LOG_FLAG, val: 1 }, Clwb { line: 11 }, Done { ret: None }]
        );
        assert_eq!(
            trace(&r, Call::Write { obj: 1, val: 6 }, &mut m, 0),
            [
                Store { line: 11, word: PAYLOAD, val: 6 },
                Store { line: 11, word: FREE_MARK, val: 0 },
                Clwb { line: 11 },
                Done { ret: None }
            ]
        );
        assert_eq!(
            trace(&r, Call::Free { obj: 1 }, &mut m, 4),
            [
                Store { line: 11, word: FREE_MARK, val: 1 },
                ReadClock,
                Store { line: 11, word: LOGGED_TIME, val: 4 },
                Clwb { line: 11 },
                Load { line: 2, word: TAIL },
                Store { line: 2, word: 2, val: 1 },
                Store { line: 2, word: TAIL, val: 1 },
                Clwb { line: 2 },
                Done { ret: None }
            ]
        );
    }

    #[test]
    fn reader_engine_writes_back_its_timing_record_before_flushing() {
        let r = rt(true);
        let mut m = vec![((2, TAIL), 1), ((2, 2), 1), ((3, TAIL), 1), ((3, 2), 0)];
        let ops = trace(&r, Call::Quiesce { free: true, stale: true }, &mut m, 0);
        assert_eq!(
            ops,
            [
                Clwb { line: 1 },
                // invalidate_log_buffer(freed)
                Clflushopt { line: 2 },
                Mfence,
                Load { line: 2, word: HEAD },
                Load { line: 2, word: TAIL },
                Load { line: 2, word: 2 },
                Clflushopt { line: 11 },
                Mfence,
                // invalidate_log_buffer(modified): the record is the pointer's line
                Clflushopt { line: 3 },
                Mfence,
                Load { line: 3, word: HEAD },
                Load { line: 3, word: TAIL },
                Load { line: 3, word: 2 },
                Clflushopt { line: 0 },
                Mfence,
                Done { ret: None }
            ]
        );
        let first_flush = ops.iter().position(|o| matches!(o, Clflushopt { .. })).unwrap();
        let wb = ops.iter().position(|o| *o == Clwb { line: 1 }).unwrap();
        assert!(wb < first_flush);
    }

    #[test]
    fn reader_engine_can_write_back_its_timing_record_after_the_last_fence() {
        let last = Runtime { cfg: RtConfig { writeback_after_flush: true, ..rt(true).cfg }, ..rt(true) };
        let mut m = vec![((2, TAIL), 1), ((2, 2), 1), ((3, TAIL), 1), ((3, 2), 0)];
        let ops = trace(&last, Call::Quiesce { free: true, stale: true }, &mut m, 0);
        assert_eq!(ops.iter().filter(|o| **o == Clwb { line: 1 }).count(), 1);
        // the root's flush, then the fence that orders it, then the write-back
        assert_eq!(ops[ops.len() - 4..], [Clflushopt { line: 0 }, Mfence, Clwb { line: 1 }, Done { ret: None }]);
    }

    /// A freed log of three records logged at 3, 5 and 9.
    fn freed_log() -> Vec<((u64, u8), Word)> {
        vec![
            ((2, HEAD), 0),
            ((2, TAIL), 3),
            ((2, 2), 0),
            ((2, 3), 1),
            ((2, 4), 2),
            ((10, LOGGED_TIME), 3),
            ((11, LOGGED_TIME), 5),
            ((12, LOGGED_TIME), 9),
        ]
    }

    fn reclaimed(ops: &[MicroOp]) -> Vec<u32> {
        ops.iter().filter_map(|o| if let Reclaimed { obj } = o { Some(*obj) } else { None }).collect()
    }

    #[test]
    fn reclaim_stops_at_the_first_record_logged_too_late() {
        // clock 10, no reader inside: q = 10 - period 2 = 8; logged + D(1) <= 8 frees 3 and 5, stops at 9
        let mut m = freed_log();
        let ops = trace(&rt(true), Call::Reclaim, &mut m, 10);
        assert_eq!(
            ops[..6],
            [
                ReadClock,
                Clflushopt { line: 1 },
                Mfence,
                Load { line: 1, word: EXIT },
                Load { line: 1, word: ENTER },
                Clflushopt { line: 2 }
            ]
        );
        assert_eq!(reclaimed(&ops), [0, 1]);
        assert!(m.contains(&((2, HEAD), 2)));
        assert_eq!(ops[ops.len() - 2], Clwb { line: 2 });
        // a record exactly at the margin is reclaimed (logged_time + D <= q): 3 + 1 <= 6 - 2
        let mut m = freed_log();
        assert_eq!(reclaimed(&trace(&rt(true), Call::Reclaim, &mut m, 6)), [0]);
        // FIFO: a later record that would qualify is not reached past one that does not
        let mut m = freed_log();
        m.retain(|(a, _)| *a != (10, LOGGED_TIME));
        m.push(((10, LOGGED_TIME), 9));
        assert_eq!(reclaimed(&trace(&rt(true), Call::Reclaim, &mut m, 10)), Vec::<u32>::new());
    }

    #[test]
    fn reclaim_waits_for_a_reader_inside_and_reads_exit_first() {
        // the reader entered at 6 and has not left: q = 6 - 2 = 4 frees only the record at 3
        let mut m = freed_log();
        m.extend([((1, ENTER), 6), ((1, EXIT), 4)]);
        assert_eq!(reclaimed(&trace(&rt(true), Call::Reclaim, &mut m, 10)), [0]);
        let swapped = Runtime { cfg: RtConfig { mutant: Some(RtMutant::EnterBeforeExit), ..rt(true).cfg }, ..rt(true) };
        let ops = trace(&swapped, Call::Reclaim, &mut freed_log(), 10);
        assert_eq!(ops[3..5], [Load { line: 1, word: ENTER }, Load { line: 1, word: EXIT }]);
        let nps = Runtime { cfg: RtConfig { mutant: Some(RtMutant::NoPeriodSubtraction), ..rt(true).cfg }, ..rt(true) };
        assert_eq!(reclaimed(&trace(&nps, Call::Reclaim, &mut freed_log(), 10)), [0, 1, 2]);
    }

    #[test]
    fn domain_clocks_read_floor_of_now_plus_offset_over_tick() {
        let c = DomainClock { offset: 300, tick: 1000 };
        assert_eq!((c.read(0), c.read(699), c.read(700), c.read(1700)), (0, 0, 1, 2));
    }

    #[test]
    fn threads_pack_and_read_obj_returns_the_first_line() {
        let mut t = Thread::new(1);
        t.start(Call::Assign { ptr: 3, val: ptr_word(2, 7) });
        assert_eq!(crate::engine::pack::round_trip(&t).0, t);
        let mut m = vec![((10, PAYLOAD), 4), ((11, PAYLOAD), 5)];
        assert_eq!(
            trace(&rt(true), Call::ReadObj { obj: 0, lines: 2 }, &mut m, 0),
            [Load { line: 10, word: PAYLOAD }, Load { line: 11, word: PAYLOAD }, Done { ret: Some(4) }]
        );
        assert_eq!((ptr_obj(ptr_word(2, 7)), ptr_tag(ptr_word(2, 7)), ptr_obj(0)), (Some(2), 7, None));
    }
}
