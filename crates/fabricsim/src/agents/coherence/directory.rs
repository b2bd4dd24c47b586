//! Directory-based MSI and MESI with private write-back caches: the
//! protocol of Sorin, Hill and Wood's Primer (2nd ed., ch. 8) with a
//! blocking directory. Each address has a home directory (addresses
//! interleave across directories); the directory keeps the sharer set or
//! the owner, serves one transaction per address at a time (later requests
//! wait in their channel) and ends it when the requester sends `Unblock`
//! (and, for a read of an owned line, when the owner's `CopyBack` arrives).
//! MESI grants Exclusive to a reader when no cache holds the line; a store
//! to an E line upgrades silently to M.
//!
//! All three virtual networks (requests, forwarded requests, responses)
//! are unordered: the blocking directory makes point-to-point order
//! unnecessary, and the checker explores every delivery order.
//!
//! Each cache belongs to a core that either runs a program through a
//! memory-model front end (`core.rs`), or, with no program, loads, stores
//! and evicts any address at any time, one miss at a time (the usual
//! setting for checking the coherence invariants).

use std::collections::HashMap;
use std::sync::Arc;

use smallvec::SmallVec;

use super::core::{Core, FrontEnd, Next};
pub use super::lines::Loc;
use super::lines::{CacheLines, DirLines};
use crate::agents::cache::{CacheCounters, SetAssoc};
use std::hash::{Hash, Hasher};

use crate::agents::protocol::{
    AgentId, ChannelOrder, Ctx, Envelope, OpKind, OpOrder, Protocol, Renaming, Role, Scalarset, Step, Violation, WorkOp,
};
use crate::engine::fingerprint::Fingerprinter;
use crate::engine::pack::{get_byte, get_varint, put_varint, Pack};
use crate::programs::{Op, Outcome, Program, Value};

/// Locations a litmus program may name (its operations hold a `u8`);
/// workload-driven cores address any line.
pub const MAX_LOCS: usize = 256;
/// Caches per system (the sharer set is a 64-bit mask).
pub const MAX_PROCS: usize = 64;

pub const REQ: u8 = 0;
pub const FWD: u8 = 1;
pub const RESP: u8 = 2;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Msg {
    // requests, cache -> directory
    GetS { loc: Loc },
    GetM { loc: Loc },
    PutS { loc: Loc },
    PutM { loc: Loc, data: Value },
    // forwarded requests, directory -> cache
    FwdGetS { loc: Loc, req: AgentId },
    FwdGetM { loc: Loc, req: AgentId },
    Inv { loc: Loc, req: AgentId },
    PutAck { loc: Loc },
    // responses
    Data { loc: Loc, data: Value, acks: u8, excl: bool },
    InvAck { loc: Loc },
    CopyBack { loc: Loc, data: Value },
    Unblock { loc: Loc },
}

impl Msg {
    pub fn vc(self) -> u8 {
        match self {
            Msg::GetS { .. } | Msg::GetM { .. } | Msg::PutS { .. } | Msg::PutM { .. } => REQ,
            Msg::FwdGetS { .. } | Msg::FwdGetM { .. } | Msg::Inv { .. } | Msg::PutAck { .. } => FWD,
            _ => RESP,
        }
    }

    pub fn carries_data(self) -> bool {
        matches!(self, Msg::PutM { .. } | Msg::Data { .. } | Msg::CopyBack { .. })
    }
}

/// Cache line states; the transient ones are named as in the Primer
/// (`IM_AD`: was I, going to M, waiting for data and acks).
#[allow(non_camel_case_types)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CState {
    I,
    S,
    E,
    M,
    IS_D,
    IM_AD,
    SM_AD,
    MI_A,
    SI_A,
    II_A,
}

impl CState {
    pub fn readable(self) -> bool {
        matches!(self, CState::S | CState::E | CState::M | CState::SM_AD)
    }
    pub fn writable(self) -> bool {
        matches!(self, CState::E | CState::M)
    }
    pub fn stable(self) -> bool {
        matches!(self, CState::I | CState::S | CState::E | CState::M)
    }
}

/// What waits for a line's transaction to finish.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Waiter {
    None,
    /// Operation `i` of the core's program.
    Op(u8),
    /// The head of the TSO store buffer.
    Drain,
    /// A load or a store of the unconstrained core.
    Load,
    Store(Value),
    /// A workload's acquire load: the core's later operations wait for it.
    Acquire,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Line {
    pub st: CState,
    pub data: Value,
    pub got_data: bool,
    pub acks_needed: u8,
    pub acks_got: u8,
    pub waiter: Waiter,
}

impl Default for Line {
    fn default() -> Self {
        Line { st: CState::I, data: 0, got_data: false, acks_needed: 0, acks_got: 0, waiter: Waiter::None }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct DirLine {
    pub owner: Option<AgentId>,
    /// Bit per cache.
    pub sharers: u64,
    pub mem: Value,
    /// Messages the current transaction still waits for (0: idle).
    pub wait: u8,
}

// Hashing. The checker fingerprints every state it reaches (and, with
// symmetry, each candidate renaming of it), so messages and lines hash as
// a few packed words rather than field by field (the derived way). Each
// packing is injective.

impl Msg {
    /// The message as two words: kind, requester, acks, exclusivity and
    /// location; and its data.
    #[inline]
    fn words(self) -> (u64, u64) {
        let w = |kind: u64, loc: Loc, req: AgentId| kind | (req as u64) << 8 | (loc as u64) << 32;
        match self {
            Msg::GetS { loc } => (w(0, loc, 0), 0),
            Msg::GetM { loc } => (w(1, loc, 0), 0),
            Msg::PutS { loc } => (w(2, loc, 0), 0),
            Msg::PutM { loc, data } => (w(3, loc, 0), data as u64),
            Msg::FwdGetS { loc, req } => (w(4, loc, req), 0),
            Msg::FwdGetM { loc, req } => (w(5, loc, req), 0),
            Msg::Inv { loc, req } => (w(6, loc, req), 0),
            Msg::PutAck { loc } => (w(7, loc, 0), 0),
            Msg::Data { loc, data, acks, excl } => {
                (w(8, loc, 0) | (acks as u64) << 16 | (excl as u64) << 24, data as u64)
            }
            Msg::InvAck { loc } => (w(9, loc, 0), 0),
            Msg::CopyBack { loc, data } => (w(10, loc, 0), data as u64),
            Msg::Unblock { loc } => (w(11, loc, 0), 0),
        }
    }
}

impl Hash for Msg {
    #[inline]
    fn hash<H: Hasher>(&self, h: &mut H) {
        let (a, b) = self.words();
        h.write_u64(a);
        h.write_u64(b);
    }
}

impl Waiter {
    /// The waiter as a word: its kind, and an operation's index.
    #[inline]
    fn word(self) -> u64 {
        match self {
            Waiter::None => 0,
            Waiter::Op(i) => 1 | (i as u64) << 8,
            Waiter::Drain => 2,
            Waiter::Load => 3,
            Waiter::Store(_) => 4,
            Waiter::Acquire => 5,
        }
    }
}

impl Line {
    /// Everything but the data and a waiting store's value, as a word.
    #[inline]
    fn word(&self) -> u64 {
        self.st as u64
            | (self.got_data as u64) << 4
            | (self.acks_needed as u64) << 8
            | (self.acks_got as u64) << 16
            | self.waiter.word() << 24
    }
}

impl Hash for Line {
    #[inline]
    fn hash<H: Hasher>(&self, h: &mut H) {
        h.write_u64(self.word());
        h.write_u64(self.data as u64);
        if let Waiter::Store(v) = self.waiter {
            h.write_u64(v as u64);
        }
    }
}

impl Hash for DirLine {
    #[inline]
    fn hash<H: Hasher>(&self, h: &mut H) {
        h.write_u64(self.owner.map_or(0, |o| o as u64 + 1) | (self.wait as u64) << 16);
        h.write_u64(self.sharers);
        h.write_u64(self.mem as u64);
    }
}

// Packing (the checker's frontier, `engine::pack`): a message is a varint
// of its kind and location, then its other fields; lines and cores are
// mostly idle, so they pack sparsely (one byte when at their default).

impl Pack for Msg {
    #[inline]
    fn pack(&self, out: &mut Vec<u8>) {
        let head = |out: &mut Vec<u8>, kind: u64, loc: Loc| put_varint(out, kind | (loc as u64) << 4);
        match *self {
            Msg::GetS { loc } => head(out, 0, loc),
            Msg::GetM { loc } => head(out, 1, loc),
            Msg::PutS { loc } => head(out, 2, loc),
            Msg::PutM { loc, data } => {
                head(out, 3, loc);
                data.pack(out);
            }
            Msg::FwdGetS { loc, req } => {
                head(out, 4, loc);
                out.push(req);
            }
            Msg::FwdGetM { loc, req } => {
                head(out, 5, loc);
                out.push(req);
            }
            Msg::Inv { loc, req } => {
                head(out, 6, loc);
                out.push(req);
            }
            Msg::PutAck { loc } => head(out, 7, loc),
            Msg::Data { loc, data, acks, excl } => {
                head(out, 8, loc);
                data.pack(out);
                out.extend_from_slice(&[acks, excl as u8]);
            }
            Msg::InvAck { loc } => head(out, 9, loc),
            Msg::CopyBack { loc, data } => {
                head(out, 10, loc);
                data.pack(out);
            }
            Msg::Unblock { loc } => head(out, 11, loc),
        }
    }

    #[inline]
    fn unpack(src: &mut &[u8]) -> Self {
        let h = get_varint(src);
        let loc = (h >> 4) as Loc;
        match h & 15 {
            0 => Msg::GetS { loc },
            1 => Msg::GetM { loc },
            2 => Msg::PutS { loc },
            3 => Msg::PutM { loc, data: Pack::unpack(src) },
            4 => Msg::FwdGetS { loc, req: get_byte(src) },
            5 => Msg::FwdGetM { loc, req: get_byte(src) },
            6 => Msg::Inv { loc, req: get_byte(src) },
            7 => Msg::PutAck { loc },
            8 => Msg::Data { loc, data: Pack::unpack(src), acks: get_byte(src), excl: bool::unpack(src) },
            9 => Msg::InvAck { loc },
            10 => Msg::CopyBack { loc, data: Pack::unpack(src) },
            11 => Msg::Unblock { loc },
            k => panic!("{k} is not a packed directory message"),
        }
    }
}

crate::pack_enum!(CState { I, S, E, M, IS_D, IM_AD, SM_AD, MI_A, SI_A, II_A });

impl Pack for Waiter {
    #[inline]
    fn pack(&self, out: &mut Vec<u8>) {
        match *self {
            Waiter::None => out.push(0),
            Waiter::Op(i) => out.extend_from_slice(&[1, i]),
            Waiter::Drain => out.push(2),
            Waiter::Load => out.push(3),
            Waiter::Store(v) => {
                out.push(4);
                v.pack(out);
            }
            Waiter::Acquire => out.push(5),
        }
    }

    #[inline]
    fn unpack(src: &mut &[u8]) -> Self {
        match get_byte(src) {
            0 => Waiter::None,
            1 => Waiter::Op(get_byte(src)),
            2 => Waiter::Drain,
            3 => Waiter::Load,
            4 => Waiter::Store(Pack::unpack(src)),
            5 => Waiter::Acquire,
            k => panic!("{k} is not a packed waiter"),
        }
    }
}

crate::pack_sparse!(Line { st, data, got_data, acks_needed, acks_got, waiter });
crate::pack_sparse!(DirLine { owner, sharers, mem, wait });
crate::pack_struct!(Ghost { last });

impl Pack for Node {
    #[inline]
    fn pack(&self, out: &mut Vec<u8>) {
        match self {
            Node::Cache { core, lines } => {
                out.push(0);
                core.pack(out);
                lines.pack(out);
            }
            Node::Dir { lines } => {
                out.push(1);
                lines.pack(out);
            }
        }
    }

    #[inline]
    fn unpack(src: &mut &[u8]) -> Self {
        match get_byte(src) {
            0 => Node::Cache { core: Pack::unpack(src), lines: Pack::unpack(src) },
            1 => Node::Dir { lines: Pack::unpack(src) },
            k => panic!("{k} is not a packed directory node"),
        }
    }

    #[inline]
    fn unpack_into(&mut self, src: &mut &[u8]) {
        let k = src.first().copied();
        match (self, k) {
            (Node::Cache { core, lines }, Some(0)) => {
                get_byte(src);
                core.unpack_into(src);
                lines.unpack_into(src);
            }
            (Node::Dir { lines }, Some(1)) => {
                get_byte(src);
                lines.unpack_into(src);
            }
            (me, _) => *me = Node::unpack(src),
        }
    }
}

#[derive(PartialEq, Eq, Hash)]
pub enum Node {
    Cache { core: Core, lines: CacheLines },
    Dir { lines: DirLines },
}

// By hand, so the checker's clone of a state copies line slices at once
// (see `CacheLines`), and reuses their storage in `clone_from`.
impl Clone for Node {
    #[inline]
    fn clone(&self) -> Self {
        match self {
            Node::Cache { core, lines } => Node::Cache { core: core.clone(), lines: lines.clone() },
            Node::Dir { lines } => Node::Dir { lines: SmallVec::from_slice(lines) },
        }
    }

    #[inline]
    fn clone_from(&mut self, other: &Self) {
        match (self, other) {
            (Node::Cache { core, lines }, Node::Cache { core: c, lines: l }) => {
                core.clone_from(c);
                lines.clone_from(l);
            }
            (Node::Dir { lines }, Node::Dir { lines: l }) if lines.len() == l.len() => lines.copy_from_slice(l),
            (me, other) => *me = other.clone(),
        }
    }
}

/// Compact, for traces: only lines not in their initial state, and the
/// core only when it runs a program.
impl std::fmt::Debug for Node {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Node::Cache { core, lines } => {
                let mut parts = Vec::new();
                for (l, line) in lines.held() {
                    {
                        let mut s = format!("[{l}] {:?}", line.st);
                        if line.st != CState::I {
                            s += &format!(" data={}", line.data);
                        }
                        if line.acks_needed > 0 || line.acks_got > 0 {
                            s += &format!(" acks={}/{}", line.acks_got, line.acks_needed);
                        }
                        if line.waiter != Waiter::None {
                            s += &format!(" waiting: {:?}", line.waiter);
                        }
                        parts.push(s);
                    }
                }
                if core.len > 0 {
                    parts.push(format!("pc={} done={:b} regs={:?} sb={:?}", core.pc, core.done, core.regs, core.sb));
                }
                if parts.is_empty() {
                    write!(f, "cache: all I")
                } else {
                    write!(f, "cache: {}", parts.join("; "))
                }
            }
            Node::Dir { lines } => {
                let parts: Vec<String> = lines
                    .iter()
                    .enumerate()
                    .filter(|(_, d)| d.owner.is_some() || d.sharers != 0 || d.wait > 0 || d.mem != 0)
                    .map(|(l, d)| {
                        let st = match d.owner {
                            Some(o) => format!("owner=cache{o}"),
                            None if d.sharers != 0 => {
                                format!("sharers={}", crate::agents::text::set_of(d.sharers, "cache"))
                            }
                            None => "I".to_string(),
                        };
                        let busy = if d.wait > 0 { format!(" busy({})", d.wait) } else { String::new() };
                        format!("[{l}] {st} mem={}{busy}", d.mem)
                    })
                    .collect();
                if parts.is_empty() {
                    write!(f, "dir: all I")
                } else {
                    write!(f, "dir: {}", parts.join("; "))
                }
            }
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Variant {
    Msi,
    Mesi,
}

/// Deliberately broken variants, to show the checker catches them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mutant {
    /// A requester takes M when the data arrives, before all invalidation acks.
    GrantBeforeAcks,
    /// The directory forgets to record a new sharer.
    ForgetSharer,
    /// The directory ignores the owner's copy-back, so memory stays stale.
    StaleData,
    /// The directory drops the data of a write-back.
    DropWriteback,
    /// A sharer invalidates its copy without acknowledging.
    InvWithoutAck,
    /// The RC front end lets a release overtake earlier operations.
    ReorderRelease,
}

pub const MUTANTS: &[(&str, Mutant)] = &[
    ("grant-before-acks", Mutant::GrantBeforeAcks),
    ("forget-sharer", Mutant::ForgetSharer),
    ("stale-data", Mutant::StaleData),
    ("drop-writeback", Mutant::DropWriteback),
    ("inv-without-ack", Mutant::InvWithoutAck),
    ("reorder-release", Mutant::ReorderRelease),
];

pub fn mutant_by_name(name: &str) -> Option<Mutant> {
    MUTANTS.iter().find(|(n, _)| *n == name).map(|(_, m)| *m)
}

#[derive(Debug, PartialEq, Eq, Hash)]
pub struct Ghost {
    /// The last value written to each location (coherence order).
    pub last: SmallVec<[Value; 4]>,
}

impl Clone for Ghost {
    #[inline]
    fn clone(&self) -> Self {
        Ghost { last: SmallVec::from_slice(&self.last) }
    }

    #[inline]
    fn clone_from(&mut self, other: &Self) {
        if self.last.len() == other.last.len() {
            self.last.copy_from_slice(&other.last);
        } else {
            *self = other.clone();
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    // unconstrained core (environment)
    Load(Loc),
    /// A load that hits (workload-driven timing only; the checker's loads are all misses or none).
    Hit(Loc),
    /// An acquire load that misses: the core issues nothing else until it completes (workload-driven timing only).
    Acquire(Loc),
    Store(Loc, Value),
    /// A store that joins the store miss in flight to its line: the MSHR
    /// merges it and the later value is written when the line arrives; the
    /// store retires at once (workload-driven RC timing only).
    Merge(Loc, Value),
    Evict(Loc),
    // program cores
    Step,
    Drain,
    Perform(u8),
}

/// A directory protocol instance: sizes, variant, and what the cores do.
#[derive(Debug, Clone)]
pub struct Directory {
    pub variant: Variant,
    pub caches: usize,
    pub dirs: usize,
    pub locs: usize,
    /// Values an unconstrained core may store.
    pub values: Vec<Value>,
    pub program: Option<Arc<Program>>,
    pub front_end: FrontEnd,
    /// TSO program cores: store buffer entries.
    pub store_buffer: usize,
    pub mutant: Option<Mutant>,
    /// Symmetry reduction (unconstrained cores only): caches are
    /// interchangeable, and so are the two data values and, with one
    /// directory or one per address, two addresses.
    pub symmetry: bool,
    /// Timing engine: caches with a capacity (absent: every location, as checked).
    pub cache: Option<CacheShape>,
    /// Misses a workload-driven core may have outstanding.
    pub mshrs: u16,
    /// Cores driven by a workload (timing): they take no spontaneous actions.
    pub driven: bool,
    /// Consecutive lines homed at one directory (1: line interleaving).
    pub granule: usize,
    /// Another protocol's coherence domain (see [`Directory::domain`]): the
    /// agent whose sharer bit is bit 0 (agent `a` has bit `a - first`), the
    /// virtual channel of `REQ` (`FWD` and `RESP` follow), the requesters
    /// that never take Exclusive (read-only sharers), and those the
    /// directory forgets to record as sharers (a mutant). All 0 here.
    pub first: AgentId,
    pub vc_base: u8,
    pub reader_only: u64,
    pub forget: u64,
}

/// Operation ids of merged stores (a workload operation's id is its line;
/// the timing engine keys an operation by its id below 2^56 and its agent).
const MERGED: u64 = 1 << 55;

pub use crate::agents::family::CacheShape;

impl Directory {
    /// Unconstrained cores: the coherence-invariant check.
    pub fn free(variant: Variant, caches: usize, dirs: usize, locs: usize, values: usize) -> Self {
        assert!(caches <= MAX_PROCS && dirs >= 1);
        Directory {
            variant,
            caches,
            dirs,
            locs,
            values: (0..values as Value).collect(),
            program: None,
            front_end: FrontEnd::Sc,
            store_buffer: super::core::STORE_BUFFER,
            mutant: None,
            symmetry: false,
            cache: None,
            mshrs: 1,
            driven: false,
            granule: 1,
            first: 0,
            vc_base: 0,
            reader_only: 0,
            forget: 0,
        }
    }

    /// Workload-driven cores for the timing engine: `locs` lines, caches of
    /// the given shape (or holding every line), `mshrs` misses per core.
    pub fn timed(
        variant: Variant,
        caches: usize,
        dirs: usize,
        locs: usize,
        cache: Option<CacheShape>,
        mshrs: u16,
        front_end: FrontEnd,
    ) -> Self {
        Directory {
            cache,
            mshrs: mshrs.max(1),
            driven: true,
            front_end,
            ..Directory::free(variant, caches, dirs, locs, 2)
        }
    }

    /// One core per thread of `program`, behind `front_end`.
    pub fn running(variant: Variant, program: Arc<Program>, front_end: FrontEnd, dirs: usize) -> Self {
        Directory {
            caches: program.threads.len(),
            locs: program.locations.len(),
            program: Some(program),
            front_end,
            ..Directory::free(variant, 0, dirs, 0, 0)
        }
    }

    /// The coherence domain inside another protocol (pcie's host): caches
    /// run by SC program threads or a workload, one directory that is agent
    /// `home`, sharer bits counted from agent `first`, the three virtual
    /// networks from `vc_base`. Each agent of `first..home` whose messages
    /// reach the handlers below is a coherent requester; the others never
    /// send to the directory.
    pub fn domain(home: AgentId, first: AgentId, vc_base: u8, locs: usize, program: Option<Arc<Program>>) -> Self {
        Directory { caches: home as usize, locs, program, first, vc_base, ..Directory::free(Variant::Mesi, 0, 1, 0, 0) }
    }

    /// The sharer bit of agent `a`.
    #[inline]
    pub fn bit(&self, a: AgentId) -> u64 {
        1u64 << (a - self.first)
    }

    /// Send `m` on its virtual network.
    #[inline]
    fn put<M: From<Msg>, G>(&self, ctx: &mut Ctx<M, G>, to: AgentId, m: Msg) {
        ctx.send(to, self.vc_base + m.vc(), m.into());
    }

    /// Home `granule` consecutive lines at each directory in turn (timing:
    /// a host's memory in blocks).
    pub fn with_granule(mut self, granule: usize) -> Self {
        self.granule = granule.max(1);
        self
    }

    pub fn with_symmetry(mut self, on: bool) -> Self {
        self.symmetry = on && self.program.is_none();
        self
    }

    /// Whether the addresses are a scalarset: all on one directory, or
    /// one directory per address (renaming addresses renames directories).
    fn addresses_symmetric(&self) -> bool {
        self.locs >= 2 && (self.dirs == 1 || self.dirs == self.locs)
    }

    /// Whether the data values are a scalarset (they are `0..n`).
    fn values_symmetric(&self) -> bool {
        self.values.len() >= 2 && self.values.iter().enumerate().all(|(i, &v)| v == i as Value)
    }

    pub fn with_mutant(mut self, m: Option<Mutant>) -> Self {
        self.mutant = m;
        self
    }

    fn is(&self, m: Mutant) -> bool {
        self.mutant == Some(m)
    }

    pub fn home(&self, loc: Loc) -> AgentId {
        let block = if self.granule == 1 { loc as usize } else { loc as usize / self.granule };
        // (by a mask when the count is a power of two: no division per message)
        let d = if self.dirs.is_power_of_two() { block & (self.dirs - 1) } else { block % self.dirs };
        (self.caches + d) as AgentId
    }

    /// Index of `loc` in its home directory's lines.
    #[inline]
    fn idx(&self, loc: Loc) -> usize {
        if self.granule == 1 {
            return if self.dirs.is_power_of_two() {
                loc as usize >> self.dirs.trailing_zeros()
            } else {
                loc as usize / self.dirs
            };
        }
        let (block, within) = (loc as usize / self.granule, loc as usize % self.granule);
        let round = if self.dirs.is_power_of_two() { block >> self.dirs.trailing_zeros() } else { block / self.dirs };
        round * self.granule + within
    }

    fn prog(&self, me: AgentId) -> &[Op] {
        self.program.as_ref().map(|p| p.threads[me as usize].as_slice()).unwrap_or(&[])
    }

    /// The final outcome of a quiescent state: registers and memory.
    pub fn outcome(&self, agents: &[Node]) -> Outcome {
        let p = self.program.as_ref().expect("a program");
        let regs = (0..self.caches)
            .map(|t| match &agents[t] {
                Node::Cache { core, .. } => core.regs[..p.registers[t].len()].to_vec(),
                Node::Dir { .. } => unreachable!(),
            })
            .collect();
        let mem = (0..self.locs)
            .map(|l| {
                let owned = agents[..self.caches].iter().find_map(|a| match a {
                    Node::Cache { lines, .. } if lines.get(l as Loc).st.writable() => Some(lines.get(l as Loc).data),
                    _ => None,
                });
                owned.unwrap_or_else(|| match &agents[self.home(l as Loc) as usize] {
                    Node::Dir { lines } => lines[self.idx(l as Loc)].mem,
                    Node::Cache { .. } => unreachable!(),
                })
            })
            .collect();
        Outcome { regs, mem }
    }

    // ------------------------------------------------------------ cache side

    /// Try to perform a memory operation at the cache now. Returns
    /// Ok(true) if done, Ok(false) if a miss was started.
    fn access<M: From<Msg>, G: CohGhost>(
        &self,
        core: &mut Core,
        line: &mut Line,
        ctx: &mut Ctx<M, G>,
        loc: Loc,
        op: Op,
        waiter: Waiter,
    ) -> Result<bool, Violation> {
        match op {
            Op::Load { reg, .. } => {
                if line.st.readable() {
                    check_value(ctx.ghost.coh(), loc, line.data)?;
                    core.regs[reg as usize] = line.data;
                    return Ok(true);
                }
                self.get_s(core, line, ctx, loc);
            }
            Op::Store { value, .. } => {
                if line.st.writable() {
                    write(line, ctx.ghost.coh(), loc, value);
                    return Ok(true);
                }
                self.get_m(core, line, ctx, loc);
            }
            Op::Rmw { reg, kind, .. } => {
                if line.st.writable() {
                    check_value(ctx.ghost.coh(), loc, line.data)?;
                    core.regs[reg as usize] = line.data;
                    if let Some(new) = kind.apply(line.data) {
                        write(line, ctx.ghost.coh(), loc, new);
                    }
                    return Ok(true);
                }
                self.get_m(core, line, ctx, loc);
            }
            Op::Fence { .. } => return Ok(true),
        }
        line.waiter = waiter;
        Ok(false)
    }

    fn get_s<M: From<Msg>, G: CohGhost>(&self, core: &mut Core, line: &mut Line, ctx: &mut Ctx<M, G>, loc: Loc) {
        core.misses += 1;
        line.st = CState::IS_D;
        self.put(ctx, self.home(loc), Msg::GetS { loc });
    }

    fn get_m<M: From<Msg>, G: CohGhost>(&self, core: &mut Core, line: &mut Line, ctx: &mut Ctx<M, G>, loc: Loc) {
        core.misses += 1;
        line.st = if line.st == CState::S { CState::SM_AD } else { CState::IM_AD };
        line.got_data = false;
        line.acks_needed = 0;
        line.acks_got = 0;
        self.put(ctx, self.home(loc), Msg::GetM { loc });
    }

    /// The line for a miss on `loc`, allocated in its set; a timed cache
    /// whose set is full writes a stable victim back first.
    fn alloc<'l, M: From<Msg>, G: CohGhost>(
        &self,
        lines: &'l mut CacheLines,
        ctx: &mut Ctx<M, G>,
        loc: Loc,
    ) -> &'l mut Line {
        if let Some((v, mut victim)) = lines.make_room(loc) {
            // (an E victim's PutM carries its data too, but it is clean)
            let dirty = victim.st == CState::M;
            lines.count(|c| {
                c.evictions += 1;
                c.writebacks += u64::from(dirty);
            });
            self.write_back(&mut victim, ctx, v);
            lines.evicting(v, victim);
        }
        lines.entry(loc)
    }

    /// Give up a stable line: PutS for a shared copy, PutM with the data otherwise.
    fn write_back<M: From<Msg>, G: CohGhost>(&self, line: &mut Line, ctx: &mut Ctx<M, G>, l: Loc) {
        match line.st {
            CState::S => {
                line.st = CState::SI_A;
                self.put(ctx, self.home(l), Msg::PutS { loc: l });
            }
            _ => {
                line.st = CState::MI_A;
                self.put(ctx, self.home(l), Msg::PutM { loc: l, data: line.data });
            }
        }
    }

    /// The line's transaction finished: let whatever waited go on.
    fn wake<M: From<Msg>, G: CohGhost>(
        &self,
        me: AgentId,
        core: &mut Core,
        lines: &mut CacheLines,
        ctx: &mut Ctx<M, G>,
        loc: Loc,
    ) -> Result<(), Violation> {
        core.misses = core.misses.saturating_sub(1);
        let line = lines.get_mut(loc).expect("a line whose transaction finished is held");
        let waiter = std::mem::replace(&mut line.waiter, Waiter::None);
        match waiter {
            Waiter::None => {}
            Waiter::Load => {
                check_value(ctx.ghost.coh(), loc, line.data)?;
                ctx.done(loc as u64);
            }
            Waiter::Acquire => {
                check_value(ctx.ghost.coh(), loc, line.data)?;
                ctx.done(loc as u64);
                core.waiting = false;
            }
            Waiter::Store(v) => {
                write(line, ctx.ghost.coh(), loc, v);
                ctx.done(loc as u64);
            }
            Waiter::Op(i) => {
                let op = self.prog(me)[i as usize];
                let done = self.access(core, line, ctx, loc, op, Waiter::Op(i))?;
                debug_assert!(done, "the line has the permission the operation needed");
                ctx.done(i as u64);
                core.finish(self.front_end, i);
            }
            Waiter::Drain => {
                let (l, v) = core.sb.pop().expect("the store waiting for its line");
                debug_assert_eq!(l as Loc, loc);
                write(line, ctx.ghost.coh(), loc, v);
            }
        }
        Ok(())
    }

    fn finish_m<M: From<Msg>, G: CohGhost>(
        &self,
        me: AgentId,
        core: &mut Core,
        lines: &mut CacheLines,
        ctx: &mut Ctx<M, G>,
        loc: Loc,
    ) -> Result<(), Violation> {
        let line = lines.get_mut(loc).expect("a line being filled is held");
        line.st = CState::M;
        line.got_data = false;
        line.acks_needed = 0;
        line.acks_got = 0;
        self.put(ctx, self.home(loc), Msg::Unblock { loc });
        self.wake(me, core, lines, ctx, loc)
    }

    pub fn cache_message<M: From<Msg>, G: CohGhost>(
        &self,
        me: AgentId,
        core: &mut Core,
        lines: &mut CacheLines,
        ctx: &mut Ctx<M, G>,
        msg: Msg,
    ) -> Result<Step, Violation> {
        use CState::*;
        let home = |loc| self.home(loc);
        match msg {
            Msg::Data { loc, data, acks, excl } => {
                let Some(line) = lines.get_mut(loc) else { return Err(Violation::unexpected(CState::I, msg)) };
                match line.st {
                    IS_D => {
                        line.st = if excl { E } else { S };
                        line.data = data;
                        self.put(ctx, home(loc), Msg::Unblock { loc });
                        self.wake(me, core, lines, ctx, loc)?;
                    }
                    IM_AD | SM_AD => {
                        line.data = data;
                        line.got_data = true;
                        line.acks_needed = acks;
                        if line.acks_got == acks || self.is(Mutant::GrantBeforeAcks) {
                            self.finish_m(me, core, lines, ctx, loc)?;
                        }
                    }
                    st => return Err(Violation::unexpected(st, msg)),
                }
            }
            Msg::InvAck { loc } => {
                let Some(line) = lines.get_mut(loc) else { return Err(Violation::unexpected(CState::I, msg)) };
                match line.st {
                    IM_AD | SM_AD => {
                        line.acks_got += 1;
                        if line.got_data && line.acks_got == line.acks_needed {
                            self.finish_m(me, core, lines, ctx, loc)?;
                        }
                    }
                    // The grant-before-acks mutant already took M: late acks are its symptom.
                    M | E if self.is(Mutant::GrantBeforeAcks) => {}
                    st => return Err(Violation::unexpected(st, msg)),
                }
            }
            Msg::Inv { loc, req } => {
                let Some(line) = lines.get_mut(loc) else { return Err(Violation::unexpected(CState::I, msg)) };
                line.st = match line.st {
                    S => I,
                    SM_AD => IM_AD,
                    SI_A => II_A,
                    st => return Err(Violation::unexpected(st, msg)),
                };
                if line.st == I {
                    lines.release(loc);
                }
                if !self.is(Mutant::InvWithoutAck) {
                    self.put(ctx, req, Msg::InvAck { loc });
                }
            }
            Msg::FwdGetS { loc, req } => {
                let Some(line) = lines.get_mut(loc) else { return Err(Violation::unexpected(CState::I, msg)) };
                line.st = match line.st {
                    M | E => S,
                    MI_A => SI_A,
                    st => return Err(Violation::unexpected(st, msg)),
                };
                self.put(ctx, req, Msg::Data { loc, data: line.data, acks: 0, excl: false });
                self.put(ctx, home(loc), Msg::CopyBack { loc, data: line.data });
            }
            Msg::FwdGetM { loc, req } => {
                let Some(line) = lines.get_mut(loc) else { return Err(Violation::unexpected(CState::I, msg)) };
                line.st = match line.st {
                    M | E => I,
                    MI_A => II_A,
                    st => return Err(Violation::unexpected(st, msg)),
                };
                let data = line.data;
                if line.st == I {
                    lines.release(loc);
                }
                self.put(ctx, req, Msg::Data { loc, data, acks: 0, excl: false });
            }
            Msg::PutAck { loc } => {
                let Some(line) = lines.get_mut(loc) else { return Err(Violation::unexpected(CState::I, msg)) };
                line.st = match line.st {
                    SI_A | MI_A | II_A => I,
                    st => return Err(Violation::unexpected(st, msg)),
                };
                lines.release(loc);
            }
            _ => return Err(Violation::unexpected("cache", msg)),
        }
        Ok(Step::Done)
    }

    /// The actions a cache's core may take now (see [`Protocol::actions`]).
    pub fn cache_actions<A: From<Action>>(&self, core: &Core, lines: &CacheLines, me: AgentId, out: &mut Vec<A>) {
        let Some(program) = &self.program else {
            // An unconstrained core is an in-order core with one miss
            // outstanding at a time (a single MSHR), evictions included.
            if self.driven || lines.any_transient() {
                return;
            }
            for l in 0..self.locs as Loc {
                let line = lines.get(l);
                match line.st {
                    CState::I => {
                        out.push(Action::Load(l).into());
                        out.extend(self.values.iter().map(|&v| Action::Store(l, v).into()));
                    }
                    CState::S | CState::E | CState::M => {
                        out.extend(self.values.iter().map(|&v| Action::Store(l, v).into()));
                        out.push(Action::Evict(l).into());
                    }
                    _ => {}
                }
            }
            return;
        };
        let prog = &program.threads[me as usize];
        let free =
            |loc: Option<u8>| loc.is_none_or(|l| lines.get(l as Loc).st.stable() && lines.can_allocate(l as Loc));
        core.next_moves(self.front_end, prog, self.store_buffer, self.is(Mutant::ReorderRelease), free, |n| {
            out.push(
                match n {
                    Next::Step => Action::Step,
                    Next::Drain => Action::Drain,
                    Next::Perform(j) => Action::Perform(j),
                }
                .into(),
            )
        });
    }

    /// A cache's core takes `action` (see [`Protocol::act`]).
    pub fn cache_act<M: From<Msg>, G: CohGhost>(
        &self,
        core: &mut Core,
        lines: &mut CacheLines,
        ctx: &mut Ctx<M, G>,
        action: Action,
    ) -> Result<(), Violation> {
        let me = ctx.me;
        match action {
            Action::Hit(l) => {
                ctx.issued(l as u64, OpKind::Load);
                lines.count(|c| c.hits += 1);
                lines.touch(l);
                check_value(ctx.ghost.coh(), l, lines.get(l).data)?;
                ctx.done(l as u64);
            }
            Action::Load(l) => {
                ctx.issued(l as u64, OpKind::Load);
                lines.count(|c| c.misses += 1);
                let line = self.alloc(lines, ctx, l);
                line.waiter = Waiter::Load;
                self.get_s(core, line, ctx, l);
            }
            Action::Acquire(l) => {
                ctx.issued(l as u64, OpKind::Load);
                lines.count(|c| c.misses += 1);
                let line = self.alloc(lines, ctx, l);
                line.waiter = Waiter::Acquire;
                core.waiting = true;
                self.get_s(core, line, ctx, l);
            }
            Action::Store(l, v) => {
                ctx.issued(l as u64, OpKind::Store);
                let line = self.alloc(lines, ctx, l);
                let hit = line.st.writable();
                if hit {
                    write(line, ctx.ghost.coh(), l, v);
                    ctx.done(l as u64);
                } else {
                    self.get_m(core, line, ctx, l);
                    line.waiter = Waiter::Store(v);
                }
                lines.count(|c| if hit { c.hits += 1 } else { c.misses += 1 });
            }
            Action::Merge(l, v) => {
                // its own operation id: the miss it joins is open under the line's
                let id = MERGED | l as u64;
                ctx.issued(id, OpKind::Store);
                // no request of its own: a hit, as the driver sees it (done at once)
                lines.count(|c| c.hits += 1);
                let line = lines.get_mut(l).expect("a merged store's line has a miss in flight");
                line.waiter = Waiter::Store(v);
                ctx.done(id);
            }
            Action::Evict(l) => {
                let line = lines.get_mut(l).expect("only a held line is evicted");
                let dirty = line.st == CState::M;
                self.write_back(line, ctx, l);
                lines.count(|c| {
                    c.evictions += 1;
                    c.writebacks += u64::from(dirty);
                });
            }
            Action::Step => {
                let i = core.pc;
                let op = self.prog(me)[i as usize];
                ctx.issued(i as u64, op_kind(op));
                if self.front_end == FrontEnd::Tso && core.tso_buffered(op) {
                    ctx.done(i as u64);
                    return Ok(());
                }
                match op.loc() {
                    None => {
                        core.pc += 1;
                        ctx.done(i as u64);
                    }
                    Some(l) => {
                        if self.access(core, self.alloc(lines, ctx, l as Loc), ctx, l as Loc, op, Waiter::Op(i))? {
                            core.pc += 1;
                            ctx.done(i as u64);
                        } else {
                            core.waiting = true;
                        }
                    }
                }
            }
            Action::Drain => {
                let &(l, v) = core.sb.head().expect("a buffered store drains");
                let l = l as Loc;
                let line = self.alloc(lines, ctx, l);
                if line.st.writable() {
                    write(line, ctx.ghost.coh(), l, v);
                    core.sb.pop();
                } else {
                    self.get_m(core, line, ctx, l);
                    line.waiter = Waiter::Drain;
                }
            }
            Action::Perform(j) => {
                let op = self.prog(me)[j as usize];
                ctx.issued(j as u64, op_kind(op));
                let done = match op.loc() {
                    None => true,
                    Some(l) => self.access(core, self.alloc(lines, ctx, l as Loc), ctx, l as Loc, op, Waiter::Op(j))?,
                };
                if done {
                    core.done |= 1 << j;
                    ctx.done(j as u64);
                } else {
                    core.inflight |= 1 << j;
                }
            }
        }
        Ok(())
    }

    /// The action a workload-driven cache's next operation maps to, if it
    /// may start now (see [`Protocol::workload_action`]).
    pub fn cache_workload_action(&self, core: &Core, lines: &CacheLines, op: &WorkOp) -> Option<Action> {
        let locs = self.locs as u64;
        let l = if locs.is_power_of_two() { op.line & (locs - 1) } else { op.line % locs } as Loc;
        let line = lines.get(l);
        let v = (op.value % 2) as Value;
        // A line with a transaction in flight waits, but under RC a relaxed store joins a store miss
        // in flight to its line (MSHR merging: the word stores of one line take one miss); a miss with
        // every MSHR busy or no way free waits.
        if !line.st.stable() {
            let merge = self.front_end == FrontEnd::Rc
                && op.kind == OpKind::Store
                && op.order == OpOrder::Relaxed
                && !core.waiting
                && matches!(line.waiter, Waiter::Store(_));
            return merge.then_some(Action::Merge(l, v));
        }
        // SC: one operation at a time, hits included; RC (relaxed workload operations): hits under misses,
        // misses in parallel up to the MSHRs, one transaction per line. An acquire holds back every later
        // operation until it completes; a release waits for every earlier one.
        if core.waiting || (self.front_end == FrontEnd::Sc || op.order == OpOrder::Release) && core.misses > 0 {
            return None;
        }
        match op.kind {
            OpKind::Load if line.st.readable() => Some(Action::Hit(l)),
            OpKind::Store | OpKind::Rmw if line.st.writable() => Some(Action::Store(l, v)),
            _ if core.misses >= self.mshrs || !lines.can_allocate(l) => None,
            OpKind::Load if op.order == OpOrder::Acquire => Some(Action::Acquire(l)),
            OpKind::Load => Some(Action::Load(l)),
            _ => Some(Action::Store(l, v)),
        }
    }

    // ------------------------------------------------------------ directory side

    pub fn dir_message<M: From<Msg>, G: CohGhost>(
        &self,
        lines: &mut DirLines,
        ctx: &mut Ctx<M, G>,
        from: AgentId,
        msg: Msg,
    ) -> Result<Step, Violation> {
        let bit = |a: AgentId| self.bit(a);
        match msg {
            Msg::GetS { loc } | Msg::GetM { loc } | Msg::PutS { loc } | Msg::PutM { loc, .. }
                if lines[self.idx(loc)].wait > 0 =>
            {
                Ok(Step::Stall)
            }
            Msg::GetS { loc } => {
                let d = &mut lines[self.idx(loc)];
                match d.owner {
                    Some(o) if o != from => {
                        self.put(ctx, o, Msg::FwdGetS { loc, req: from });
                        d.owner = None;
                        d.sharers = bit(o) | bit(from);
                        d.wait = 2; // the requester's Unblock and the owner's CopyBack
                    }
                    Some(_) => return Err(Violation::unexpected("owner asking to read its own line", msg)),
                    None if d.sharers == 0 && self.variant == Variant::Mesi && self.reader_only & bit(from) == 0 => {
                        ctx.memory_read(self.idx(loc) as u64);
                        self.put(ctx, from, Msg::Data { loc, data: d.mem, acks: 0, excl: true });
                        d.owner = Some(from);
                        d.wait = 1;
                    }
                    None => {
                        ctx.memory_read(self.idx(loc) as u64);
                        self.put(ctx, from, Msg::Data { loc, data: d.mem, acks: 0, excl: false });
                        if !self.is(Mutant::ForgetSharer) && self.forget & bit(from) == 0 {
                            d.sharers |= bit(from);
                        }
                        d.wait = 1;
                    }
                }
                Ok(Step::Done)
            }
            Msg::GetM { loc } => {
                let d = &mut lines[self.idx(loc)];
                match d.owner {
                    Some(o) if o != from => self.put(ctx, o, Msg::FwdGetM { loc, req: from }),
                    Some(_) => return Err(Violation::unexpected("owner asking for its own line", msg)),
                    None => {
                        ctx.memory_read(self.idx(loc) as u64);
                        let others = d.sharers & !bit(from);
                        self.put(
                            ctx,
                            from,
                            Msg::Data { loc, data: d.mem, acks: others.count_ones() as u8, excl: false },
                        );
                        let mut rest = others;
                        while rest != 0 {
                            let s = self.first + rest.trailing_zeros() as AgentId;
                            self.put(ctx, s, Msg::Inv { loc, req: from });
                            rest &= rest - 1;
                        }
                    }
                }
                d.owner = Some(from);
                d.sharers = 0;
                d.wait = 1;
                Ok(Step::Done)
            }
            Msg::PutS { loc } => {
                lines[self.idx(loc)].sharers &= !bit(from);
                self.put(ctx, from, Msg::PutAck { loc });
                Ok(Step::Done)
            }
            Msg::PutM { loc, data } => {
                let d = &mut lines[self.idx(loc)];
                if d.owner == Some(from) {
                    if !self.is(Mutant::DropWriteback) {
                        d.mem = data;
                    }
                    ctx.memory_write(self.idx(loc) as u64);
                    d.owner = None;
                } else {
                    // A stale put: the line was taken away while the write-back was in flight.
                    d.sharers &= !bit(from);
                }
                self.put(ctx, from, Msg::PutAck { loc });
                Ok(Step::Done)
            }
            Msg::Unblock { loc } | Msg::CopyBack { loc, .. } => {
                let d = &mut lines[self.idx(loc)];
                if d.wait == 0 {
                    return Err(Violation::unexpected("idle directory line", msg));
                }
                if let Msg::CopyBack { data, .. } = msg {
                    if !self.is(Mutant::StaleData) {
                        d.mem = data;
                    }
                    ctx.memory_write(self.idx(loc) as u64);
                }
                d.wait -= 1;
                Ok(Step::Done)
            }
            _ => Err(Violation::unexpected("directory", msg)),
        }
    }
}

fn op_kind(op: Op) -> OpKind {
    match op {
        Op::Load { .. } => OpKind::Load,
        Op::Store { .. } => OpKind::Store,
        Op::Rmw { .. } => OpKind::Rmw,
        Op::Fence { .. } => OpKind::Fence,
    }
}

/// A store performed with write permission: the line becomes M and holds
/// the newest value in coherence order.
/// A protocol's ghost state that holds this protocol's: the last value
/// written to each location, in coherence order.
pub trait CohGhost {
    fn coh(&mut self) -> &mut Ghost;
}

impl CohGhost for Ghost {
    #[inline]
    fn coh(&mut self) -> &mut Ghost {
        self
    }
}

fn write(line: &mut Line, ghost: &mut Ghost, loc: Loc, v: Value) {
    line.st = CState::M;
    line.data = v;
    ghost.last[loc as usize] = v;
}

fn check_value(ghost: &Ghost, loc: Loc, v: Value) -> Result<(), Violation> {
    if ghost.last[loc as usize] != v {
        return Err(Violation {
            kind: "data-value invariant",
            detail: format!(
                "a load of location {loc} returned {v}, but the last write in coherence order wrote {}",
                ghost.last[loc as usize]
            ),
        });
    }
    Ok(())
}

impl Protocol for Directory {
    type Agent = Node;
    type Msg = Msg;
    type Ghost = Ghost;
    type Action = Action;

    fn name(&self) -> String {
        let v = match self.variant {
            Variant::Msi => "msi",
            Variant::Mesi => "mesi",
        };
        let m = self
            .mutant
            .and_then(|m| MUTANTS.iter().find(|x| x.1 == m))
            .map(|x| format!("+{}", x.0))
            .unwrap_or_default();
        format!("{v}{m}")
    }

    fn vc_orders(&self) -> &[ChannelOrder] {
        &[ChannelOrder::Unordered, ChannelOrder::Unordered, ChannelOrder::Unordered]
    }

    /// [`REQ`], [`FWD`], [`RESP`]: the names `classes.csv` shows.
    fn vc_names(&self) -> Vec<String> {
        ["req", "fwd", "resp"].map(String::from).to_vec()
    }

    fn initial(&self) -> Vec<(Vec<Node>, Ghost)> {
        let init = |l: usize| self.program.as_ref().map(|p| p.init[l]).unwrap_or(0);
        let mut agents: Vec<Node> = (0..self.caches)
            .map(|t| Node::Cache {
                core: Core { len: self.prog(t as AgentId).len() as u8, ..Core::default() },
                lines: match &self.cache {
                    None => CacheLines::dense(self.locs),
                    Some(c) => CacheLines::assoc(SetAssoc::new(c.geometry, c.policy, c.seed.wrapping_add(t as u64))),
                },
            })
            .collect();
        // each directory's locations, in the order `idx` numbers them
        let mut homes: Vec<DirLines> = vec![DirLines::new(); self.dirs];
        for l in 0..self.locs {
            homes[self.home(l as Loc) as usize - self.caches].push(DirLine { mem: init(l), ..DirLine::default() });
        }
        agents.extend(homes.into_iter().map(|lines| Node::Dir { lines }));
        let last = (0..self.locs).map(init).collect();
        vec![(agents, Ghost { last })]
    }

    fn on_message(
        &self,
        agent: &mut Node,
        ctx: &mut Ctx<Msg, Ghost>,
        from: AgentId,
        msg: Msg,
    ) -> Result<Step, Violation> {
        let me = ctx.me;
        match agent {
            Node::Cache { core, lines } => self.cache_message(me, core, lines, ctx, msg),
            Node::Dir { lines } => self.dir_message(lines, ctx, from, msg),
        }
    }

    fn actions(&self, agent: &Node, me: AgentId, _ghost: &Ghost, out: &mut Vec<Action>) {
        let Node::Cache { core, lines } = agent else { return };
        self.cache_actions(core, lines, me, out);
    }

    fn act(&self, agent: &mut Node, ctx: &mut Ctx<Msg, Ghost>, action: Action) -> Result<(), Violation> {
        let Node::Cache { core, lines } = agent else { unreachable!("directories have no actions") };
        self.cache_act(core, lines, ctx, action)
    }

    fn is_environment(&self, action: &Action) -> bool {
        matches!(
            action,
            Action::Load(_)
                | Action::Acquire(_)
                | Action::Hit(_)
                | Action::Store(..)
                | Action::Merge(..)
                | Action::Evict(_)
        )
    }

    fn invariant(&self, agents: &[Node], ghost: &Ghost) -> Result<(), (String, String)> {
        let check = |c: usize, l: Loc, line: &Line, counts: &mut (u32, u32)| {
            if line.st.writable() {
                counts.0 += 1;
            } else if line.st.readable() {
                counts.1 += 1;
            }
            if line.st.readable() && line.data != ghost.last[l as usize] {
                return Err((
                    "data-value invariant".to_string(),
                    format!(
                        "cache{c} holds {} for location {l} in {:?}, but the last write wrote {}",
                        line.data, line.st, ghost.last[l as usize]
                    ),
                ));
            }
            Ok(())
        };
        let swmr = |l: Loc, (writers, readers): (u32, u32)| {
            if writers > 1 || (writers == 1 && readers > 0) {
                return Err((
                    "single-writer-multiple-readers".to_string(),
                    format!("location {l} has {writers} writers and {readers} readers at once"),
                ));
            }
            Ok(())
        };
        if self.cache.is_none() && self.locs <= 64 {
            // checked systems: every location of every cache, without allocating
            for l in 0..self.locs as Loc {
                let mut counts = (0, 0);
                for (c, a) in agents[..self.caches].iter().enumerate() {
                    let Node::Cache { lines, .. } = a else { continue };
                    check(c, l, &lines.get(l), &mut counts)?;
                }
                swmr(l, counts)?;
            }
            return Ok(());
        }
        // timed systems: only the lines caches hold
        let mut counts: HashMap<Loc, (u32, u32)> = HashMap::new();
        for (c, a) in agents[..self.caches].iter().enumerate() {
            let Node::Cache { lines, .. } = a else { continue };
            for (l, line) in lines.held() {
                check(c, l, &line, counts.entry(l).or_default())?;
            }
        }
        let mut locs: Vec<_> = counts.into_iter().collect();
        locs.sort_unstable_by_key(|e| e.0);
        for (l, n) in locs {
            swmr(l, n)?;
        }
        Ok(())
    }

    fn busy(&self, agent: &Node) -> bool {
        match agent {
            Node::Cache { core, lines } => lines.any_transient() || !core.finished(),
            Node::Dir { lines } => lines.iter().any(|l| l.wait > 0),
        }
    }

    /// CACHE (set 0, keyed: sorted by a key of each cache's own state,
    /// ties permuted), VALUE (set 1) and ADDRESS (set 2) when they are
    /// symmetric (every renaming tried: they are small).
    fn scalarsets(&self) -> Vec<Scalarset> {
        if !self.symmetry {
            return Vec::new();
        }
        let size = |on: bool, n: usize| if on { n } else { 1 };
        vec![
            Scalarset { name: "CACHE", size: self.caches, keyed: true, complete: false },
            Scalarset {
                name: "VALUE",
                size: size(self.values_symmetric(), self.values.len()),
                keyed: false,
                complete: false,
            },
            Scalarset {
                name: "ADDRESS",
                size: size(self.addresses_symmetric(), self.locs),
                keyed: false,
                complete: false,
            },
        ]
    }

    fn rename(&self, r: &Renaming, from: &[Node], to: &mut [Node], ghost: &mut Ghost, mail: &mut [Envelope<Msg>]) {
        let (vals, addrs) = (self.values_symmetric(), self.addresses_symmetric());
        let v = |x: Value| if vals { r.of(VALUE_SET, x as u8) as Value } else { x };
        let l = |x: Loc| if addrs { r.of(ADDRESS_SET, x as u8) as Loc } else { x };
        let c = |x: AgentId| r.of(CACHE_SET, x);
        let agent = |a: AgentId| -> AgentId {
            if (a as usize) < self.caches {
                c(a)
            } else if self.dirs > 1 && addrs {
                (self.caches + l((a as usize - self.caches) as Loc) as usize) as AgentId
            } else {
                a
            }
        };
        for (i, node) in from.iter().enumerate() {
            let slot = &mut to[agent(i as AgentId) as usize];
            slot.clone_from(node);
            match (node, slot) {
                (
                    Node::Cache { lines: CacheLines::Dense(old), .. },
                    Node::Cache { lines: CacheLines::Dense(nl), .. },
                ) => {
                    for (j, line) in old.iter().enumerate().take(self.locs) {
                        let waiter = match line.waiter {
                            Waiter::Store(x) => Waiter::Store(v(x)),
                            w => w,
                        };
                        nl[l(j as Loc) as usize] = Line { data: v(line.data), waiter, ..*line };
                    }
                }
                (Node::Dir { lines: old }, Node::Dir { lines: nl }) => {
                    let d = i - self.caches;
                    for (k, dl) in old.iter().enumerate() {
                        let j = (d + k * self.dirs) as Loc;
                        nl[self.idx(l(j))] = DirLine {
                            owner: dl.owner.map(c),
                            sharers: r.mask(CACHE_SET, dl.sharers),
                            mem: v(dl.mem),
                            wait: dl.wait,
                        };
                    }
                }
                _ => unreachable!("symmetry applies to checked (dense) systems"),
            }
        }
        let last = ghost.last.clone();
        for (j, &x) in last.iter().enumerate().take(self.locs) {
            ghost.last[l(j as Loc) as usize] = v(x);
        }
        for e in mail.iter_mut() {
            e.to = agent(e.to);
            e.from = agent(e.from);
            e.msg = rename_msg(e.msg, &v, &l, &c);
        }
    }

    /// A cache's key: a hash of its core, its lines, what the directories
    /// record of it (sharer, owner) and the messages it sends and receives,
    /// each with the other caches' names left out (so the key does not
    /// depend on how caches are named; ties are permuted).
    fn element_keys(
        &self,
        _set: usize,
        r: &Renaming,
        agents: &[Node],
        _ghost: &Ghost,
        mail: &[Envelope<Msg>],
        out: &mut [u64],
    ) {
        let (vals, addrs) = (self.values_symmetric(), self.addresses_symmetric());
        let v = |x: Value| if vals { r.of(VALUE_SET, x as u8) as Value } else { x };
        let l = |x: Loc| if addrs { r.of(ADDRESS_SET, x as u8) as Loc } else { x };
        let locs = self.locs;
        // Scratch space by renamed location, on the stack for a few.
        const FEW: usize = 16;
        let (mut dir_few, mut dir_many) = ([(0u64, None::<AgentId>); FEW], Vec::new());
        let (mut lines_few, mut lines_many) = ([(0u64, 0u64); FEW], Vec::new());
        let (dir, lines) = if locs <= FEW {
            (&mut dir_few[..locs], &mut lines_few[..locs])
        } else {
            dir_many.resize(locs, (0, None));
            lines_many.resize(locs, (0, 0));
            (&mut dir_many[..], &mut lines_many[..])
        };
        // What the directories record, by renamed location: sharers, owner.
        for (d, node) in agents[self.caches..].iter().enumerate() {
            let Node::Dir { lines: dls } = node else { continue };
            for (k, dl) in dls.iter().enumerate() {
                let j = (d + k * self.dirs) as Loc;
                if (j as usize) < locs {
                    dir[l(j) as usize] = (dl.sharers, dl.owner);
                }
            }
        }
        // The messages each cache sends and receives, as an unordered sum
        // (in `out` until the keys replace it); other caches are named
        // only as "another", and a message's requester as "this cache"
        // or "another".
        out.fill(0);
        for e in mail {
            for me in [e.to, e.from] {
                if me as usize >= self.caches || (me == e.from && e.to == e.from) {
                    continue;
                }
                let name = |a: AgentId| -> u64 {
                    if a == me {
                        0x100
                    } else if (a as usize) < self.caches {
                        0x200
                    } else if self.dirs > 1 && addrs {
                        l((a as usize - self.caches) as Loc) as u64
                    } else {
                        (a as usize - self.caches) as u64
                    }
                };
                let anon = |x: AgentId| if x == me { 0 } else { 1 };
                let (word, data) = rename_msg(e.msg, &v, &l, &anon).words();
                let head = name(e.to) | name(e.from) << 12 | (e.vc as u64) << 24;
                out[me as usize] = out[me as usize].wrapping_add(mix(mix(word, head), data));
            }
        }
        // Keys are hashed from packed words (they are computed for every
        // renaming of values and addresses of every successor, so they
        // must be cheap); equal keys of different caches only cost a
        // permutation more, never a wrong orbit.
        for (ci, k) in out.iter_mut().enumerate() {
            let Node::Cache { core, lines: CacheLines::Dense(ls) } = &agents[ci] else {
                unreachable!("symmetry applies to checked (dense) systems")
            };
            for (j, line) in ls.iter().enumerate() {
                let stored = match line.waiter {
                    Waiter::Store(x) => v(x) as u64,
                    _ => 0,
                };
                let (sharers, owner) = dir[l(j as Loc) as usize];
                let word = line.word()
                    | (sharers >> ci & 1) << 5
                    | ((owner == Some(ci as AgentId)) as u64) << 6
                    | stored << 40;
                lines[l(j as Loc) as usize] = (word, v(line.data) as u64);
            }
            let mut h = Fingerprinter::default();
            // An unconstrained core (the only kind with symmetry) changes
            // nothing but its miss count.
            h.write_u16(core.misses);
            for &(word, data) in lines.iter() {
                h.write_u64(word);
                h.write_u64(data);
            }
            h.write_u64(*k);
            *k = h.finish();
        }
    }

    fn agent_name(&self, id: AgentId) -> String {
        if (id as usize) < self.caches {
            format!("cache{id}")
        } else {
            format!("dir{}", id as usize - self.caches)
        }
    }

    fn role(&self, id: AgentId) -> Role {
        if (id as usize) < self.caches {
            Role::Core
        } else {
            Role::Home
        }
    }

    fn carries_data(&self, msg: &Msg) -> bool {
        msg.carries_data()
    }

    /// Directories only answer messages.
    fn has_actions(&self, id: AgentId) -> bool {
        self.role(id) == Role::Core
    }

    /// A timed cache with a capacity (`[protocol.cache]`) counts; one that
    /// holds every line (no capacity: no evictions) does not.
    fn cache_counters(&self, agent: &Node) -> Option<CacheCounters> {
        match agent {
            Node::Cache { lines, .. } => lines.counters(),
            Node::Dir { .. } => None,
        }
    }

    fn workload_action(&self, agent: &Node, _me: AgentId, op: &WorkOp) -> Option<Action> {
        let Node::Cache { core, lines } = agent else { return None };
        self.cache_workload_action(core, lines, op)
    }
}

/// The scalarsets, as [`Protocol::scalarsets`] numbers them.
const CACHE_SET: usize = 0;
const VALUE_SET: usize = 1;
const ADDRESS_SET: usize = 2;

/// A message with its fields renamed.
/// A 64-bit mix of two words (multiply and xor-shift).
#[inline]
fn mix(a: u64, b: u64) -> u64 {
    let x = (a ^ b.rotate_left(32)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    x ^ x >> 29
}

fn rename_msg(msg: Msg, v: &impl Fn(Value) -> Value, l: &impl Fn(Loc) -> Loc, c: &impl Fn(AgentId) -> AgentId) -> Msg {
    match msg {
        Msg::GetS { loc } => Msg::GetS { loc: l(loc) },
        Msg::GetM { loc } => Msg::GetM { loc: l(loc) },
        Msg::PutS { loc } => Msg::PutS { loc: l(loc) },
        Msg::PutM { loc, data } => Msg::PutM { loc: l(loc), data: v(data) },
        Msg::FwdGetS { loc, req } => Msg::FwdGetS { loc: l(loc), req: c(req) },
        Msg::FwdGetM { loc, req } => Msg::FwdGetM { loc: l(loc), req: c(req) },
        Msg::Inv { loc, req } => Msg::Inv { loc: l(loc), req: c(req) },
        Msg::PutAck { loc } => Msg::PutAck { loc: l(loc) },
        Msg::Data { loc, data, acks, excl } => Msg::Data { loc: l(loc), data: v(data), acks, excl },
        Msg::InvAck { loc } => Msg::InvAck { loc: l(loc) },
        Msg::CopyBack { loc, data } => Msg::CopyBack { loc: l(loc), data: v(data) },
        Msg::Unblock { loc } => Msg::Unblock { loc: l(loc) },
    }
}
