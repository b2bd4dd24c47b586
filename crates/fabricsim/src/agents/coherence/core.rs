//! The core's memory-model front end: which operation of its program may be
//! performed next, under SC, TSO or RC (the seeds' words), independent of
//! the coherence protocol behind it.
//!
//! - SC: one operation at a time, in program order.
//! - TSO: stores retire into a FIFO store buffer (the one component,
//!   `agents/core/store_buffer.rs`) and drain to the cache in order; loads
//!   forward from the youngest buffered store to their location; a seq_cst
//!   fence or an RMW waits for the buffer to drain (x86-TSO, C11 accesses
//!   mapped to plain x86 accesses).
//! - RC: any operation may be performed once nothing before it forbids it:
//!   a later operation waits for an earlier acquire (acquire load, RMW or
//!   fence), a release waits for every earlier operation, operations on one
//!   location stay in order, a fence waits for everything before it, and a
//!   seq_cst access is both an acquire and a release.

use crate::agents::core::StoreBuffer;
use crate::engine::pack::{get_varint, put_varint, Pack};
use crate::programs::{Op, Program, Value};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FrontEnd {
    Sc,
    Tso,
    Rc,
}

impl FrontEnd {
    /// The cores' front end for a memory model.
    pub fn of(model: crate::programs::Model) -> Self {
        use crate::programs::Model;
        match model {
            Model::Sc => FrontEnd::Sc,
            Model::Tso => FrontEnd::Tso,
            Model::Rc => FrontEnd::Rc,
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        match s.to_ascii_lowercase().as_str() {
            "sc" => Some(FrontEnd::Sc),
            "tso" => Some(FrontEnd::Tso),
            "rc" => Some(FrontEnd::Rc),
            _ => None,
        }
    }
}

pub const MAX_REGS: usize = 4;
/// Store buffer entries of a TSO program core unless its protocol says
/// otherwise (the size every litmus check so far was run with).
pub const STORE_BUFFER: usize = 4;

/// A buffered store: its location and value.
pub type Buffered = (u8, Value);

/// Architectural state of one core running a program.
#[derive(Debug, PartialEq, Eq, Default)]
pub struct Core {
    /// Operations in this core's program.
    pub len: u8,
    /// SC/TSO: next operation; RC: unused.
    pub pc: u8,
    /// RC: operations performed / in flight (bit per operation).
    pub done: u32,
    pub inflight: u32,
    /// SC/TSO: an operation waits for a miss.
    pub waiting: bool,
    pub regs: [Value; MAX_REGS],
    /// TSO store buffer, oldest first (its capacity is the protocol's).
    pub sb: StoreBuffer<Buffered, STORE_BUFFER>,
    /// Misses outstanding (GetS/GetM sent, not yet finished).
    pub misses: u16,
}

/// Hashed as packed words (the checker hashes every state): one word for
/// a core that runs no program (all but the first word are zero then).
impl std::hash::Hash for Core {
    #[inline]
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        let head = self.len as u64
            | (self.pc as u64) << 8
            | (self.waiting as u64) << 16
            | (self.sb.len() as u64) << 24
            | (self.misses as u64) << 32;
        let program =
            self.len > 0 || self.done != 0 || self.inflight != 0 || !self.sb.is_empty() || self.regs != [0; MAX_REGS];
        h.write_u64(head | (program as u64) << 48);
        if program {
            h.write_u64(self.done as u64 | (self.inflight as u64) << 32);
            for r in self.regs {
                h.write_u64(r as u64);
            }
            for &(l, v) in self.sb.iter() {
                h.write_u8(l);
                h.write_u64(v as u64);
            }
        }
    }
}

// Cloned and unpacked in place, field by field: the checker copies every
// core of a state into scratch space for each successor, and with its store
// buffer a core is past the size a move copies inline (the whole-value copy
// of a derived `clone_from` or `unpack_into` would call memcpy each time).
impl Clone for Core {
    #[inline]
    fn clone(&self) -> Self {
        let Core { len, pc, done, inflight, waiting, regs, ref sb, misses } = *self;
        Core { len, pc, done, inflight, waiting, regs, sb: sb.clone(), misses }
    }

    #[inline]
    fn clone_from(&mut self, o: &Self) {
        self.len = o.len;
        self.pc = o.pc;
        self.done = o.done;
        self.inflight = o.inflight;
        self.waiting = o.waiting;
        self.regs = o.regs;
        self.sb.clone_from(&o.sb);
        self.misses = o.misses;
    }
}

/// Packed sparsely (as `pack_sparse!` would): a bit mask of the fields off
/// their defaults, then those fields; a core that runs no program is at its
/// default but for `misses`.
impl Pack for Core {
    #[inline]
    fn pack(&self, out: &mut Vec<u8>) {
        let mask = (self.len != 0) as u64
            | ((self.pc != 0) as u64) << 1
            | ((self.done != 0) as u64) << 2
            | ((self.inflight != 0) as u64) << 3
            | (self.waiting as u64) << 4
            | ((self.regs != [0; MAX_REGS]) as u64) << 5
            | ((!self.sb.is_empty()) as u64) << 6
            | ((self.misses != 0) as u64) << 7;
        put_varint(out, mask);
        let on = |bit: u32| mask >> bit & 1 == 1;
        if on(0) {
            self.len.pack(out);
        }
        if on(1) {
            self.pc.pack(out);
        }
        if on(2) {
            self.done.pack(out);
        }
        if on(3) {
            self.inflight.pack(out);
        }
        if on(4) {
            self.waiting.pack(out);
        }
        if on(5) {
            self.regs.pack(out);
        }
        if on(6) {
            self.sb.pack(out);
        }
        if on(7) {
            self.misses.pack(out);
        }
    }

    #[inline]
    fn unpack(src: &mut &[u8]) -> Self {
        let mut c = Core::default();
        c.unpack_into(src);
        c
    }

    #[inline]
    fn unpack_into(&mut self, src: &mut &[u8]) {
        let mask = get_varint(src);
        let on = |bit: u32| mask >> bit & 1 == 1;
        self.len = if on(0) { Pack::unpack(src) } else { 0 };
        self.pc = if on(1) { Pack::unpack(src) } else { 0 };
        self.done = if on(2) { Pack::unpack(src) } else { 0 };
        self.inflight = if on(3) { Pack::unpack(src) } else { 0 };
        self.waiting = on(4) && bool::unpack(src);
        self.regs = if on(5) { Pack::unpack(src) } else { [0; MAX_REGS] };
        if on(6) {
            self.sb.unpack_into(src);
        } else {
            self.sb.clear();
        }
        self.misses = if on(7) { Pack::unpack(src) } else { 0 };
    }
}

fn acquire_like(op: Op) -> bool {
    match op {
        Op::Load { order, .. } | Op::Rmw { order, .. } | Op::Fence { order } => order.is_acquire(),
        Op::Store { order, .. } => order.is_seq_cst(),
    }
}

fn release_like(op: Op) -> bool {
    match op {
        Op::Store { order, .. } | Op::Rmw { order, .. } | Op::Fence { order } => order.is_release(),
        Op::Load { order, .. } => order.is_seq_cst(),
    }
}

impl Core {
    /// Every operation performed and the store buffer empty.
    pub fn finished(&self) -> bool {
        let all = if self.len >= 32 { u32::MAX } else { (1u32 << self.len) - 1 };
        (self.pc == self.len || self.done == all) && !self.waiting && self.sb.is_empty() && self.inflight == 0
    }

    /// RC: may operation `j` be performed now? `reorder_release` is the
    /// deliberately broken variant that lets a release overtake earlier
    /// operations.
    pub fn rc_may_start(&self, prog: &[Op], j: usize, reorder_release: bool) -> bool {
        if self.done >> j & 1 == 1 || self.inflight >> j & 1 == 1 {
            return false;
        }
        let oj = prog[j];
        for (i, &oi) in prog.iter().enumerate().take(j) {
            if self.done >> i & 1 == 1 {
                continue;
            }
            if acquire_like(oi) || matches!(oi, Op::Fence { .. }) {
                return false;
            }
            if (release_like(oj) && !reorder_release) || matches!(oj, Op::Fence { .. }) {
                return false;
            }
            if oi.loc().is_some() && oi.loc() == oj.loc() {
                return false;
            }
        }
        true
    }
}

/// What a program core may do next: the front end's choice, whatever
/// coherence protocol serves the access.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Next {
    /// SC/TSO: perform the operation at `pc`.
    Step,
    /// TSO: drain the store buffer's head.
    Drain,
    /// RC: perform operation `j`.
    Perform(u8),
}

impl Core {
    /// The front end's enabled moves for `prog` under `front_end`, in the
    /// order they are offered; `free(loc)` says whether an access to `loc`
    /// may go to the cache now (no transaction of its own in flight there),
    /// `store_buffer` is the TSO buffer's capacity.
    #[inline]
    pub fn next_moves(
        &self,
        front_end: FrontEnd,
        prog: &[Op],
        store_buffer: usize,
        reorder_release: bool,
        free: impl Fn(Option<u8>) -> bool,
        mut out: impl FnMut(Next),
    ) {
        match front_end {
            FrontEnd::Sc => {
                if !self.waiting && (self.pc as usize) < prog.len() && free(prog[self.pc as usize].loc()) {
                    out(Next::Step);
                }
            }
            FrontEnd::Tso => {
                if !self.waiting && (self.pc as usize) < prog.len() {
                    let ok = match prog[self.pc as usize] {
                        Op::Load { loc, .. } => self.sb.forward(loc).is_some() || free(Some(loc)),
                        Op::Store { .. } => self.sb.has_room(store_buffer),
                        Op::Rmw { loc, .. } => self.sb.is_empty() && free(Some(loc)),
                        Op::Fence { order } => !order.is_seq_cst() || self.sb.is_empty(),
                    };
                    if ok {
                        out(Next::Step);
                    }
                }
                // the head drains when its line may be fetched
                if self.sb.head().is_some_and(|&(l, _)| free(Some(l))) {
                    out(Next::Drain);
                }
            }
            FrontEnd::Rc => {
                for j in 0..prog.len() {
                    if self.rc_may_start(prog, j, reorder_release) && free(prog[j].loc()) {
                        out(Next::Perform(j as u8));
                    }
                }
            }
        }
    }

    /// TSO: a store retires into the buffer and a load forwards from it,
    /// without the cache; true if `op` (the one at `pc`) was so performed.
    #[inline]
    pub fn tso_buffered(&mut self, op: Op) -> bool {
        match op {
            Op::Store { loc, value, .. } => self.sb.push((loc, value)),
            Op::Load { loc, reg, .. } => match self.sb.forward(loc) {
                Some(v) => self.regs[reg as usize] = v,
                None => return false,
            },
            _ => return false,
        }
        self.pc += 1;
        true
    }

    /// Operation `i`, which waited for a miss, is performed.
    #[inline]
    pub fn finish(&mut self, front_end: FrontEnd, i: u8) {
        match front_end {
            FrontEnd::Rc => {
                self.inflight &= !(1 << i);
                self.done |= 1 << i;
            }
            _ => {
                self.waiting = false;
                self.pc += 1;
            }
        }
    }
}

/// Operations per thread a core can run: `Core::done` and `Core::inflight`
/// are `u32` bitmasks with one bit per operation.
pub const MAX_OPS: usize = u32::BITS as usize;

/// The fixed sizes of a program run on a directory protocol (threads,
/// locations, registers per thread, operations per thread), checked before
/// the protocol is built. The message names the limit, the value and where.
pub fn check_protocol_limits(program: &Program) -> Result<(), String> {
    use super::directory::{MAX_LOCS, MAX_PROCS};
    if program.code.is_some() {
        return Err("its threads are not straight lines of accesses with constant values (register \
                    arithmetic, a data or control dependency, `if`/`else`): protocols run straight-line \
                    programs; only the memory-model oracle runs this test"
            .to_string());
    }
    let threads = program.threads.len();
    if threads > MAX_PROCS {
        return Err(format!("{threads} threads: a protocol runs at most {MAX_PROCS} threads (MAX_PROCS)"));
    }
    let locs = program.locations.len();
    if locs > MAX_LOCS {
        return Err(format!(
            "{locs} locations ({}): a protocol runs at most {MAX_LOCS} locations (MAX_LOCS)",
            program.locations.join(", ")
        ));
    }
    for (t, regs) in program.registers.iter().enumerate() {
        if regs.len() > MAX_REGS {
            return Err(format!(
                "thread P{t} uses {} registers ({}): a protocol core has at most {MAX_REGS} registers per thread (MAX_REGS)",
                regs.len(),
                regs.join(", ")
            ));
        }
    }
    for (t, ops) in program.threads.iter().enumerate() {
        if ops.len() > MAX_OPS {
            return Err(format!(
                "thread P{t} has {} operations: a protocol core runs at most {MAX_OPS} operations per thread (MAX_OPS)",
                ops.len()
            ));
        }
    }
    Ok(())
}
