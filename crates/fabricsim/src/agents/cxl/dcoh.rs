//! Device-managed coherence (HDM-DB) as a [`Protocol`]: ESF's requesters
//! with private caches, and memory devices whose DCOH is an inclusive
//! snoop filter that back-invalidates (BISnp/BIRsp, InvBlk) — one model,
//! timed at full size and checked small.
//!
//! Agents: requesters `0..R` (hosts or accelerators: a cache and its
//! outstanding requests), devices `R..R+D` (a DCOH with its snoop filter and
//! request trackers, in front of the device's memory). Line `l` lives on
//! device `(l / g) mod D` with `g` the interleaving granule in lines.
//!
//! CXL.mem channels, one virtual channel each:
//!
//! | VC | channel    | messages                                   | order |
//! |----|------------|--------------------------------------------|-------|
//! | 0  | M2S Req    | MemRdS, MemRdE, BIConflict                 | FIFO  |
//! | 1  | M2S RwD    | MemWr (dirty eviction, with data)          | FIFO  |
//! | 2  | S2M NDR    | Cmp, BIConflictAck                         | any   |
//! | 3  | S2M DRS    | MemData (with data)                        | any   |
//! | 4  | S2M BISnp  | BISnp (InvBlk when it names 2–4 lines)     | any   |
//! | 5  | M2S BIRsp  | BIRsp (with the dirty lines' data)         | any   |
//!
//! Device (one handler per message):
//! - **MemRdS / MemRdE** from r: a tracker takes the request (trackers are
//!   pre-allocated for every request the requesters may have outstanding,
//!   so M2S Req is always sunk — CXL requires BIConflict never to wait
//!   behind requests). Then `progress`: a request on a line whose entry is
//!   being back-invalidated waits; a request that conflicts with owners
//!   (MemRdE: any other owner; MemRdS: another exclusive owner) sends them
//!   BISnp and waits; a request on a line without an entry takes a free
//!   entry or, with the filter full, frees a victim block: BISnp to every
//!   owner of its lines, wait for every BIRsp, write back dirty data, free
//!   the entries, then serve. Serving reads memory and answers MemData.
//! - **BIRsp** from r: write back its dirty lines, drop r from the owners
//!   and from the awaited set of each line it owned when snooped (an
//!   InvBlk BISnp asks every owner of any line of the block about all of
//!   it: dirty data for a line r did not own is a protocol error); when the last arrives, free the entries (a
//!   victim block, its freed slot reserved for the waiting request) or
//!   unblock the line (a conflict), and `progress`.
//! - **MemWr** from an owner: write memory, drop it from the owners, Cmp.
//!   (A requester answers no BISnp on the line before this Cmp, so it is
//!   still an owner; only a broken variant sends one from a non-owner,
//!   which is answered Cmp only.)
//! - **BIConflict** from r: answer which lines of the snooped block r's
//!   request was already served for (`BIConflictAck.served`).
//!
//! Requester:
//! - A load or store that misses allocates the line (evicting by policy:
//!   clean lines silently, dirty ones by MemWr) and sends MemRdS / MemRdE.
//! - **MemData**: install, perform the waiting operation.
//! - **BISnp**: invalidate the named lines, BIRsp with the dirty data. If
//!   a request on one of them is outstanding, first BIConflict: the device
//!   says whether it already served it (its MemData is then in flight,
//!   and the snoop applies after it) or not (answer at once). If one of
//!   them is being written back (MemWr sent, no Cmp yet), the BIRsp waits
//!   for the Cmp and reports that line clean (CXL's BIRspI: the data went
//!   by MemWr; see `writing_back`).
//! - **Cmp**: the write-back completed; answer the snoops that waited.
//! - **BIConflictAck**: resume the deferred snoop.
//!
//! HDM-H regions: a device's local lines below `hdm_h` are host-managed
//! (CXL's HDM-H, the memory expander of ESF's validation system): the DCOH
//! neither tracks nor back-invalidates them; MemRd is served from memory and
//! MemWr written. Nothing keeps two requesters' copies of such a line
//! coherent, which the checker shows (single writer, data value) when two
//! requesters share one; with one requester it is coherent by construction.
//!
//! Modelling choices (ESF does not say): clean evictions are silent (the
//! filter keeps stale owners, as ESF's Fig 14 mechanism implies); a BISnp
//! always invalidates (no BISnpData downgrade); BIRsp carries dirty data
//! as ESF describes (§III-D "flush it back through BIRsp") rather than a
//! separate RwD; MemRdS always grants Shared.

use super::line_store::LineStore;
pub use super::snoop_filter::MAX_BLOCK;
use super::snoop_filter::{Entry, SnoopFilter};
use crate::agents::cache::{Beside, CacheCounters, CacheGeometry, VictimPolicy};
use crate::agents::protocol::{
    AgentId, ChannelOrder, Ctx, Envelope, OpKind, OpOrder, Protocol, Renaming, Role, Scalarset, Step, Violation, WorkOp,
};
use crate::engine::pack::{get_byte, get_varint, put_varint, Pack};
use crate::engine::Time;

pub const M2S_REQ: u8 = 0;
pub const M2S_RWD: u8 = 1;
pub const S2M_NDR: u8 = 2;
pub const S2M_DRS: u8 = 3;
pub const S2M_BISNP: u8 = 4;
pub const M2S_BIRSP: u8 = 5;

/// Channel names, by VC (for traffic tables).
pub const CHANNELS: [&str; 6] = ["m2s_req", "m2s_rwd", "s2m_ndr", "s2m_drs", "s2m_bisnp", "m2s_birsp"];

pub type Line = u64;
pub type Val = u8;

/// The requesters' scalarset (see `scalarsets`).
const REQUESTER_SET: usize = 0;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Msg {
    /// M2S Req MemRd, MetaValue = S.
    MemRdS { line: Line },
    /// M2S Req MemRd, MetaValue = A (exclusive).
    MemRdE { line: Line },
    /// M2S Req: a BISnp met an outstanding request.
    BIConflict { base: Line, len: u8 },
    /// M2S RwD MemWr: a dirty eviction.
    MemWr { line: Line, data: Val },
    /// S2M NDR: the write-back is done.
    Cmp { line: Line },
    /// S2M NDR: bit i set if the request on line i of the block had been
    /// served before the snoop.
    BIConflictAck { base: Line, served: u8 },
    /// S2M DRS.
    MemData { line: Line, data: Val, excl: bool },
    /// S2M BISnp (BISnpInv; InvBlk for `len` > 1).
    BISnp { base: Line, len: u8 },
    /// M2S BIRsp: bit i of `dirty` set if line i's data is in `data[i]`.
    BIRsp { base: Line, len: u8, dirty: u8, data: [Val; MAX_BLOCK as usize] },
}

/// A requester's cache line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum St {
    /// Allocated for an outstanding request, no data yet.
    I,
    S,
    E,
    M,
}

/// The operation waiting for a line's outstanding request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Pend {
    None,
    Load,
    Store(Val),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct CLine {
    pub st: St,
    pub data: Val,
    pub pend: Pend,
}

/// A BISnp deferred by a conflict with an outstanding request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Snoop {
    pub base: Line,
    pub len: u8,
    /// BIConflictAck received, with its `served` bits.
    pub acked: bool,
    pub served: u8,
    /// Lines whose request was outstanding when the snoop arrived and
    /// whose data has not arrived since.
    pub awaiting: u8,
}

#[derive(Clone, PartialEq, Eq, Hash)]
pub struct Requester {
    pub lines: LineStore<CLine>,
    /// Dirty write-backs awaiting their Cmp.
    pub wbs: Vec<(Line, Val)>,
    pub snoops: Vec<Snoop>,
    /// Outstanding requests (MSHRs in use).
    pub pending: u16,
    /// Its cache's counters (timing only), beside the state.
    pub counters: Beside<CacheCounters>,
}

/// A request the device holds until it can be served.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Tracker {
    pub from: AgentId,
    pub line: Line,
    pub excl: bool,
    /// A victim block is being freed for this request.
    pub room: bool,
    /// Timing only (0 and false when checked): arrival, and whether it
    /// waited for a back-invalidation.
    pub since: Time,
    pub waited: bool,
}

/// Device statistics (timing only; always zero when checked).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct DcohStats {
    pub requests: u64,
    /// BISnp messages sent, for victims and for conflicts.
    pub bisnp_victim: u64,
    pub bisnp_conflict: u64,
    /// Lines the victim BISnps invalidated (InvBlk: several per BISnp).
    pub lines_invalidated: u64,
    pub dirty_writebacks: u64,
    /// Requests that waited for a back-invalidation before being served,
    /// and their time from arrival to service.
    pub waited: u64,
    pub wait_ps: u64,
    /// Requests to HDM-H lines (served without the snoop filter).
    pub hdm_h_requests: u64,
}

#[derive(Clone, PartialEq, Eq, Hash)]
pub struct Device {
    pub sf: SnoopFilter,
    /// Memory values by local line (checked only; empty when timed).
    pub mem: Vec<Val>,
    pub trackers: Vec<Tracker>,
    pub stats: DcohStats,
}

#[derive(Clone, PartialEq, Eq, Hash)]
pub enum Agent {
    Requester(Requester),
    Device(Device),
}

/// The last value written to each line (checked only).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct Ghost {
    pub last: Vec<Val>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    // requester (environment)
    Load(Line),
    Store(Line, Val),
    /// A load or store that hits (timing only).
    Hit(Line, Option<Val>),
    Evict(Line),
    // device (checked only: the victim block the policy would pick, timed)
    Victim {
        tracker: u8,
        base: Line,
        len: u8,
    },
}

// Packing (the checker's frontier, `engine::pack`): field by field, a
// message as a varint of its kind and line then its other fields.

impl Pack for Msg {
    #[inline]
    fn pack(&self, out: &mut Vec<u8>) {
        let head = |out: &mut Vec<u8>, kind: u64, line: Line| put_varint(out, kind | line << 4);
        match *self {
            Msg::MemRdS { line } => head(out, 0, line),
            Msg::MemRdE { line } => head(out, 1, line),
            Msg::BIConflict { base, len } => {
                head(out, 2, base);
                out.push(len);
            }
            Msg::MemWr { line, data } => {
                head(out, 3, line);
                out.push(data);
            }
            Msg::Cmp { line } => head(out, 4, line),
            Msg::BIConflictAck { base, served } => {
                head(out, 5, base);
                out.push(served);
            }
            Msg::MemData { line, data, excl } => {
                head(out, 6, line);
                out.extend_from_slice(&[data, excl as u8]);
            }
            Msg::BISnp { base, len } => {
                head(out, 7, base);
                out.push(len);
            }
            Msg::BIRsp { base, len, dirty, data } => {
                head(out, 8, base);
                out.extend_from_slice(&[len, dirty]);
                out.extend_from_slice(&data);
            }
        }
    }

    #[inline]
    fn unpack(src: &mut &[u8]) -> Self {
        let h = get_varint(src);
        let line = h >> 4;
        match h & 15 {
            0 => Msg::MemRdS { line },
            1 => Msg::MemRdE { line },
            2 => Msg::BIConflict { base: line, len: get_byte(src) },
            3 => Msg::MemWr { line, data: get_byte(src) },
            4 => Msg::Cmp { line },
            5 => Msg::BIConflictAck { base: line, served: get_byte(src) },
            6 => Msg::MemData { line, data: get_byte(src), excl: bool::unpack(src) },
            7 => Msg::BISnp { base: line, len: get_byte(src) },
            8 => Msg::BIRsp { base: line, len: get_byte(src), dirty: get_byte(src), data: Pack::unpack(src) },
            k => panic!("{k} is not a packed DCOH message"),
        }
    }
}

crate::pack_enum!(St { I, S, E, M });

impl Pack for Pend {
    #[inline]
    fn pack(&self, out: &mut Vec<u8>) {
        match *self {
            Pend::None => out.push(0),
            Pend::Load => out.push(1),
            Pend::Store(v) => out.extend_from_slice(&[2, v]),
        }
    }

    #[inline]
    fn unpack(src: &mut &[u8]) -> Self {
        match get_byte(src) {
            0 => Pend::None,
            1 => Pend::Load,
            2 => Pend::Store(get_byte(src)),
            k => panic!("{k} is not a packed pending operation"),
        }
    }
}

crate::pack_struct!(CLine { st, data, pend });
crate::pack_struct!(Snoop { base, len, acked, served, awaiting });
crate::pack_struct!(Requester { lines, wbs, snoops, pending, counters });
crate::pack_struct!(Tracker { from, line, excl, room, since, waited });
crate::pack_sparse!(DcohStats {
    requests,
    bisnp_victim,
    bisnp_conflict,
    lines_invalidated,
    dirty_writebacks,
    waited,
    wait_ps,
    hdm_h_requests
});
crate::pack_struct!(Device { sf, mem, trackers, stats });
crate::pack_struct!(Ghost { last });

impl Pack for Agent {
    #[inline]
    fn pack(&self, out: &mut Vec<u8>) {
        match self {
            Agent::Requester(r) => {
                out.push(0);
                r.pack(out);
            }
            Agent::Device(d) => {
                out.push(1);
                d.pack(out);
            }
        }
    }

    #[inline]
    fn unpack(src: &mut &[u8]) -> Self {
        match get_byte(src) {
            0 => Agent::Requester(Pack::unpack(src)),
            1 => Agent::Device(Pack::unpack(src)),
            k => panic!("{k} is not a packed DCOH agent"),
        }
    }
}

/// Deliberately broken variants the checker must catch (`[check] mutant`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mutant {
    /// Free the entry (and serve) at the first BIRsp instead of the last.
    FreeEarly,
    /// Lose the dirty data a BIRsp carries.
    DropDirty,
    /// A requester holds a BISnp back until its own outstanding request on
    /// the line completes: BI ordered behind requests, as on a shared
    /// request channel — the dependency CXL's BI channels exist to break.
    BisnpWaits,
    /// InvBlk names one line more than the block being freed.
    InvBlkTooLong,
    /// A requester answers a BISnp on a line whose write-back awaits its
    /// Cmp at once, with the write-back buffer's data as dirty data (the
    /// model before issue 38): a write-back the device already applied is
    /// reported again, after another requester may have written the line.
    StaleWriteback,
}

pub const MUTANTS: [(&str, Mutant); 5] = [
    ("free-before-all-birsp", Mutant::FreeEarly),
    ("drop-dirty-birsp", Mutant::DropDirty),
    ("bisnp-waits-for-request", Mutant::BisnpWaits),
    ("invblk-one-too-many", Mutant::InvBlkTooLong),
    ("stale-writeback-in-birsp", Mutant::StaleWriteback),
];

pub fn mutant_by_name(name: &str) -> Option<Mutant> {
    MUTANTS.iter().find(|m| m.0 == name).map(|m| m.1)
}

/// Timed sizes and policies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DcohTiming {
    pub cache: CacheGeometry,
    pub cache_policy: VictimPolicy,
    pub sf: CacheGeometry,
    pub sf_policy: VictimPolicy,
    pub seed: u64,
}

#[derive(Debug, Clone)]
pub struct Dcoh {
    pub requesters: usize,
    pub devices: usize,
    /// Lines in the address space (the checker's addresses; the timed
    /// workload's footprint).
    pub lines: u64,
    /// Interleaving granule, in lines.
    pub granule: u64,
    /// Outstanding requests per requester.
    pub mshrs: u16,
    /// Checked: snoop-filter entries per device, data values.
    pub sf_entries: usize,
    pub values: u8,
    /// InvBlk: longest block a BISnp invalidates (1: plain BISnp).
    pub max_block: u8,
    pub timing: Option<DcohTiming>,
    /// Timed requesters one operation at a time (SC) instead of up to
    /// `mshrs` misses in parallel.
    pub sc: bool,
    pub mutant: Option<Mutant>,
    /// Device-local lines below this are HDM-H (host-managed, untracked).
    pub hdm_h: u64,
    /// Checked: store one state per renaming of the requesters.
    pub symmetry: bool,
    vcs: [ChannelOrder; 6],
}

impl Dcoh {
    /// The checked protocol.
    pub fn checked(
        requesters: usize,
        devices: usize,
        lines: u64,
        sf_entries: usize,
        max_block: u8,
        values: u8,
    ) -> Self {
        Dcoh {
            requesters,
            devices,
            lines,
            granule: 1,
            mshrs: 1,
            sf_entries,
            values,
            max_block,
            timing: None,
            sc: false,
            mutant: None,
            hdm_h: 0,
            symmetry: false,
            vcs: Self::VCS,
        }
    }

    /// The timed protocol.
    pub fn timed(
        requesters: usize,
        devices: usize,
        lines: u64,
        granule: u64,
        mshrs: u16,
        max_block: u8,
        t: DcohTiming,
    ) -> Self {
        Dcoh {
            requesters,
            devices,
            lines,
            granule,
            mshrs,
            sf_entries: t.sf.lines() as usize,
            values: 1,
            max_block,
            timing: Some(t),
            sc: false,
            mutant: None,
            hdm_h: 0,
            symmetry: false,
            vcs: Self::VCS,
        }
    }

    /// Requesters are interchangeable: the checker keeps one state per
    /// renaming of them (`[check] symmetry`).
    pub fn with_symmetry(mut self, on: bool) -> Self {
        self.symmetry = on;
        self
    }

    const VCS: [ChannelOrder; 6] = [
        ChannelOrder::Fifo,
        ChannelOrder::Fifo,
        ChannelOrder::Unordered,
        ChannelOrder::Unordered,
        ChannelOrder::Unordered,
        ChannelOrder::Unordered,
    ];

    /// The first `lines` local lines of every device are HDM-H.
    pub fn with_hdm_h(mut self, lines: u64) -> Self {
        self.hdm_h = lines;
        self
    }

    /// Whether `line` is in a device's HDM-H region (no snoop filter).
    #[inline]
    pub fn is_hdm_h(&self, line: Line) -> bool {
        self.local(line) < self.hdm_h
    }

    pub fn with_mutant(mut self, m: Option<Mutant>) -> Self {
        self.mutant = m;
        self
    }

    fn is(&self, m: Mutant) -> bool {
        self.mutant == Some(m)
    }

    fn checked_mode(&self) -> bool {
        self.timing.is_none()
    }

    // ------------------------------------------------------------ addresses

    /// The device agent that owns `line`.
    #[inline]
    pub fn device_of(&self, line: Line) -> AgentId {
        (self.requesters as u64 + (line / self.granule) % self.devices as u64) as AgentId
    }

    /// `line`'s index in its device's memory.
    #[inline]
    pub fn local(&self, line: Line) -> u64 {
        let g = self.granule;
        (line / (g * self.devices as u64)) * g + line % g
    }

    /// The global line of device `dev`'s local line `k`.
    #[inline]
    pub fn global(&self, dev: AgentId, k: u64) -> Line {
        let g = self.granule;
        let d = (dev as usize - self.requesters) as u64;
        ((k / g) * self.devices as u64 + d) * g + k % g
    }

    /// Line `i` of the block starting at global line `base`.
    #[inline]
    fn block_line(&self, base: Line, i: u8) -> Line {
        self.global(self.device_of(base), self.local(base) + i as u64)
    }

    fn device_index(&self, me: AgentId) -> usize {
        me as usize - self.requesters
    }

    // ------------------------------------------------------------ requester

    pub(super) fn requester_message(
        &self,
        r: &mut Requester,
        ctx: &mut Ctx<Msg, Ghost>,
        from: AgentId,
        msg: Msg,
    ) -> Result<Step, Violation> {
        match msg {
            Msg::MemData { line, data, excl } => {
                let Some(l) = r.lines.get_mut(line) else {
                    return Err(Violation::unexpected("no line allocated", msg));
                };
                if l.pend == Pend::None {
                    return Err(Violation::unexpected(*l, msg));
                }
                if self.checked_mode() && data != ctx.ghost.last[line as usize] {
                    return Err(Violation {
                        kind: "data-value invariant",
                        detail: format!(
                            "MemData for line {line} carries {data}, but the last write wrote {}",
                            ctx.ghost.last[line as usize]
                        ),
                    });
                }
                l.data = data;
                l.st = if excl { St::E } else { St::S };
                match l.pend {
                    Pend::Store(v) if excl => {
                        l.st = St::M;
                        l.data = v;
                        if self.checked_mode() {
                            ctx.ghost.last[line as usize] = v;
                        }
                    }
                    Pend::Store(_) => return Err(Violation::unexpected("store waiting for shared data", msg)),
                    _ => {}
                }
                l.pend = Pend::None;
                r.pending -= 1;
                ctx.done(line);
                // Deferred snoops that waited for this data apply now.
                for i in 0..r.snoops.len() {
                    let s = &mut r.snoops[i];
                    if let Some(j) = (0..s.len).find(|&j| self.block_line(s.base, j) == line) {
                        s.awaiting &= !(1 << j);
                    }
                }
                self.answer_ready_snoops(r, ctx);
            }
            Msg::BISnp { base, len } => {
                let mut awaiting = 0u8;
                for i in 0..len {
                    if r.lines.get(self.block_line(base, i)).is_some_and(|l| l.pend != Pend::None) {
                        awaiting |= 1 << i;
                    }
                }
                if awaiting != 0 {
                    if self.is(Mutant::BisnpWaits) {
                        return Ok(Step::Stall);
                    }
                    r.snoops.push(Snoop { base, len, acked: false, served: 0, awaiting });
                    ctx.send(from, M2S_REQ, Msg::BIConflict { base, len });
                } else if self.writing_back(r, base, len) {
                    // Nothing to ask the device: the answer waits for the Cmp alone.
                    r.snoops.push(Snoop { base, len, acked: true, served: 0, awaiting: 0 });
                } else {
                    self.answer_snoop(r, ctx, base, len);
                }
            }
            Msg::BIConflictAck { base, served } => {
                let Some(i) = r.snoops.iter().position(|s| s.base == base && !s.acked) else {
                    return Err(Violation::unexpected("no snoop deferred", msg));
                };
                r.snoops[i].acked = true;
                r.snoops[i].served = served;
                self.answer_ready_snoops(r, ctx);
            }
            Msg::Cmp { line } => {
                let Some(i) = r.wbs.iter().position(|w| w.0 == line) else {
                    return Err(Violation::unexpected("no write-back in flight", msg));
                };
                r.wbs.remove(i);
                self.answer_ready_snoops(r, ctx);
            }
            _ => return Err(Violation::unexpected("requester", msg)),
        }
        Ok(Step::Done)
    }

    /// Answer the deferred snoops whose conflict is resolved: the device
    /// said which requests it had served before snooping, and their data
    /// has arrived (the snoop applies after them). A request it had not
    /// served stays outstanding; the device serves it after the snoop.
    /// A snoop also waits for the Cmp of every write-back on its lines.
    fn answer_ready_snoops(&self, r: &mut Requester, ctx: &mut Ctx<Msg, Ghost>) {
        let mut i = 0;
        while i < r.snoops.len() {
            let s = r.snoops[i];
            if s.acked && s.awaiting & s.served == 0 && !self.writing_back(r, s.base, s.len) {
                r.snoops.remove(i);
                self.answer_snoop(r, ctx, s.base, s.len);
            } else {
                i += 1;
            }
        }
    }

    /// A line of the block has a write-back whose Cmp has not arrived.
    ///
    /// Its data went to the device by MemWr, and only the Cmp says the
    /// device applied it. CXL 3.0 keeps a host's dirty data on M2S RwD
    /// (§3.3.3, flows in §3.5.1): BIRsp states what the host still holds,
    /// and a host without the line answers BIRspI. The write-back buffer's
    /// copy is no longer the host's to report: the device may have applied
    /// it, freed the entry and granted the line to another requester that
    /// wrote it since (issue 38: a block BISnp reaches a requester that
    /// owns another line of the block). So the BIRsp waits for the Cmp and
    /// then reports the line clean. vCXLGen's Murphi model of the CXL 3.0
    /// host (TUM-DSE/vCXLGen, MESIxCXLxRCC) answers the same way: BIRspI
    /// after the write-back's Cmp; it first sends BIConflict, whose answer
    /// changes nothing here, so this model waits for the Cmp alone. The
    /// device never waits on the RwD channel, so the Cmp always comes.
    fn writing_back(&self, r: &Requester, base: Line, len: u8) -> bool {
        !self.is(Mutant::StaleWriteback)
            && !r.wbs.is_empty()
            && (0..len).any(|i| {
                let line = self.block_line(base, i);
                r.wbs.iter().any(|w| w.0 == line)
            })
    }

    /// Invalidate the block's lines and answer BIRsp (to the block's
    /// device) with the dirty data.
    fn answer_snoop(&self, r: &mut Requester, ctx: &mut Ctx<Msg, Ghost>, base: Line, len: u8) {
        let mut dirty = 0u8;
        let mut data = [0; MAX_BLOCK as usize];
        let reply_len = len.min(MAX_BLOCK);
        for i in 0..len {
            let line = self.block_line(base, i);
            if let Some(l) = r.lines.get_mut(line) {
                if l.pend != Pend::None {
                    // Not yet served: its request stays outstanding; a shared copy goes.
                    l.st = St::I;
                    continue;
                }
                let was = *l;
                r.lines.remove(line);
                if was.st == St::M && i < MAX_BLOCK {
                    dirty |= 1 << i;
                    data[i as usize] = was.data;
                }
            } else if let Some(w) = r.wbs.iter().find(|w| w.0 == line).filter(|_| self.is(Mutant::StaleWriteback)) {
                if i < MAX_BLOCK {
                    dirty |= 1 << i;
                    data[i as usize] = w.1;
                }
            }
        }
        ctx.send(self.device_of(base), M2S_BIRSP, Msg::BIRsp { base, len: reply_len, dirty, data });
    }

    /// Start a miss on `line` for a load (`None`) or a store of `v`.
    pub(super) fn miss(&self, r: &mut Requester, ctx: &mut Ctx<Msg, Ghost>, line: Line, store: Option<Val>) {
        ctx.issued(line, if store.is_some() { OpKind::Store } else { OpKind::Load });
        let timed = !self.checked_mode();
        if timed {
            r.counters.0.misses += 1;
        }
        if !r.lines.has_room(line) {
            let v = r
                .lines
                .victim_where(line, |_, l| l.pend == Pend::None)
                .expect("workload_action checked that a victim exists");
            if timed {
                let c = &mut r.counters.0;
                c.evictions += 1;
                c.writebacks += u64::from(r.lines.get(v).is_some_and(|l| l.st == St::M));
            }
            self.evict(r, ctx, v);
        }
        let st = r.lines.get(line).map_or(St::I, |l| l.st);
        let data = r.lines.get(line).map_or(0, |l| l.data);
        let pend = match store {
            Some(v) => Pend::Store(v),
            None => Pend::Load,
        };
        r.lines.insert(line, CLine { st, data, pend });
        r.pending += 1;
        let dev = self.device_of(line);
        let m = if store.is_some() { Msg::MemRdE { line } } else { Msg::MemRdS { line } };
        ctx.send(dev, M2S_REQ, m);
    }

    fn evict(&self, r: &mut Requester, ctx: &mut Ctx<Msg, Ghost>, line: Line) {
        if let Some(l) = r.lines.remove(line) {
            if l.st == St::M {
                r.wbs.push((line, l.data));
                ctx.send(self.device_of(line), M2S_RWD, Msg::MemWr { line, data: l.data });
            }
        }
    }

    // ------------------------------------------------------------ device

    fn device_message(
        &self,
        d: &mut Device,
        ctx: &mut Ctx<Msg, Ghost>,
        from: AgentId,
        msg: Msg,
    ) -> Result<Step, Violation> {
        match msg {
            Msg::MemRdS { line } | Msg::MemRdE { line } if self.is_hdm_h(line) => {
                let k = self.local(line);
                if !self.checked_mode() {
                    d.stats.requests += 1;
                    d.stats.hdm_h_requests += 1;
                }
                ctx.memory_read(k);
                let data = if self.checked_mode() { d.mem[k as usize] } else { 0 };
                let excl = matches!(msg, Msg::MemRdE { .. });
                ctx.send(from, S2M_DRS, Msg::MemData { line, data, excl });
            }
            Msg::MemWr { line, data } if self.is_hdm_h(line) => {
                self.write_memory(d, ctx, self.local(line), data);
                ctx.send(from, S2M_NDR, Msg::Cmp { line });
            }
            Msg::MemRdS { line } | Msg::MemRdE { line } => {
                let excl = matches!(msg, Msg::MemRdE { .. });
                d.trackers.push(Tracker { from, line, excl, room: false, since: ctx.now, waited: false });
                if !self.checked_mode() {
                    d.stats.requests += 1;
                }
                self.progress(d, ctx);
            }
            Msg::BIRsp { base, len, dirty, data } => {
                let k0 = self.local(base);
                let bit = 1u64 << from;
                let mut done = true;
                let mut asked = false;
                for i in 0..len {
                    let k = k0 + i as u64;
                    let Some(e) = d.sf.get_mut(k) else {
                        return Err(Violation::unexpected("no snoop-filter entry", msg));
                    };
                    if !e.busy() {
                        return Err(Violation::unexpected(*e, msg));
                    }
                    if e.wait & bit == 0 {
                        // An InvBlk BISnp reaches every owner of any line of
                        // the block; the filter did not list `from` for this
                        // one, so dirty data for it is stale (issue 38).
                        if dirty & (1 << i) != 0 {
                            return Err(Violation {
                                kind: "stale dirty data",
                                detail: format!(
                                    "BIRsp from requester {from} carries dirty data for line {}, which the snoop \
                                     filter did not list for it",
                                    self.block_line(base, i)
                                ),
                            });
                        }
                        done &= e.wait == 0;
                        continue;
                    }
                    asked = true;
                    e.owners &= !bit;
                    e.wait &= !bit;
                    if self.is(Mutant::FreeEarly) {
                        e.wait = 0;
                    }
                    done &= e.wait == 0;
                    if dirty & (1 << i) != 0 && !self.is(Mutant::DropDirty) {
                        self.write_memory(d, ctx, k, data[i as usize]);
                    }
                }
                if !asked {
                    return Err(Violation::unexpected("no line of the block awaits this BIRsp", msg));
                }
                if done {
                    self.bi_done(d, k0, len);
                    self.progress(d, ctx);
                }
            }
            Msg::MemWr { line, data } => {
                let k = self.local(line);
                let bit = 1u64 << from;
                if let Some(e) = d.sf.get_mut(k).filter(|e| e.owners & bit != 0) {
                    e.owners &= !bit;
                    e.excl = false;
                    let free = e.owners == 0 && !e.busy();
                    self.write_memory(d, ctx, k, data);
                    if free {
                        d.sf.remove(k);
                    }
                }
                // Otherwise the requester's BIRsp carried the line already
                // (only the stale-writeback mutant answers before the Cmp).
                ctx.send(from, S2M_NDR, Msg::Cmp { line });
                self.progress(d, ctx);
            }
            Msg::BIConflict { base, len } => {
                let mut served = 0u8;
                for i in 0..len {
                    let line = self.block_line(base, i);
                    if !d.trackers.iter().any(|t| t.from == from && t.line == line) {
                        served |= 1 << i;
                    }
                }
                ctx.send(from, S2M_NDR, Msg::BIConflictAck { base, served });
            }
            _ => return Err(Violation::unexpected("device", msg)),
        }
        Ok(Step::Done)
    }

    fn write_memory(&self, d: &mut Device, ctx: &mut Ctx<Msg, Ghost>, k: u64, v: Val) {
        if self.checked_mode() {
            d.mem[k as usize] = v;
        } else {
            d.stats.dirty_writebacks += 1;
        }
        ctx.memory_write(k);
    }

    /// Every BIRsp of the back-invalidation on local lines `k0..k0+len`
    /// arrived: free a victim block (reserving the slot for its request),
    /// or unblock a conflicting line.
    fn bi_done(&self, d: &mut Device, k0: u64, len: u8) {
        let first = *d.sf.get(k0).expect("the entry exists");
        if !first.evicting {
            return; // a conflict: the waiting request is served next
        }
        for i in 0..len as u64 {
            d.sf.remove(k0 + i);
        }
        let want = first.for_line;
        if d.sf.get(want).is_none() && d.sf.has_room(want) {
            d.sf.insert(want, Entry::EMPTY);
        }
        for t in d.trackers.iter_mut().filter(|t| self.local(t.line) == want) {
            t.room = false;
        }
    }

    /// Serve every tracked request that can be served, in arrival order;
    /// start the back-invalidations the others need.
    fn progress(&self, d: &mut Device, ctx: &mut Ctx<Msg, Ghost>) {
        let mut i = 0;
        while i < d.trackers.len() {
            let t = d.trackers[i];
            let k = self.local(t.line);
            let bit = 1u64 << t.from;
            match d.sf.get(k).copied() {
                Some(e) if e.busy() => {}
                Some(e) => {
                    // MemRdE conflicts with every other owner; MemRdS with another exclusive one.
                    let conflicts = if t.excl || e.excl { e.owners & !bit } else { 0 };
                    if conflicts != 0 {
                        let e = d.sf.get_mut(k).expect("present");
                        e.wait = conflicts;
                        self.bisnp(d, ctx, conflicts, t.line, 1, false);
                        d.trackers[i].waited = !self.checked_mode();
                    } else {
                        self.serve(d, ctx, i, e);
                        continue;
                    }
                }
                None if d.sf.has_room(k) => {
                    d.sf.insert(k, Entry::EMPTY);
                    continue; // served on the next look
                }
                None if t.room || self.checked_mode() => {} // freeing a block, or the checker picks one
                None => {
                    if let Some((base, len)) = d.sf.choose(k) {
                        d.trackers[i].room = true;
                        d.trackers[i].waited = true;
                        self.start_eviction(d, ctx, k, base, len);
                    }
                }
            }
            i += 1;
        }
    }

    fn serve(&self, d: &mut Device, ctx: &mut Ctx<Msg, Ghost>, i: usize, e: Entry) {
        let t = d.trackers.remove(i);
        if t.waited {
            d.stats.waited += 1;
            d.stats.wait_ps += ctx.now - t.since;
        }
        let k = self.local(t.line);
        let bit = 1u64 << t.from;
        let e2 = d.sf.get_mut(k).expect("present");
        if t.excl || e.owners & !bit == 0 && e.excl {
            *e2 = Entry { owners: bit, excl: t.excl, ..Entry::EMPTY };
        } else {
            *e2 = Entry { owners: e.owners | bit, excl: false, ..Entry::EMPTY };
        }
        d.sf.touch(k);
        ctx.memory_read(k);
        let data = if self.checked_mode() { d.mem[k as usize] } else { 0 };
        ctx.send(t.from, S2M_DRS, Msg::MemData { line: t.line, data, excl: t.excl });
    }

    /// Free victim block `base..base+len` (local lines) for the request on `for_line`.
    fn start_eviction(&self, d: &mut Device, ctx: &mut Ctx<Msg, Ghost>, for_line: u64, base: u64, len: u8) {
        let mut owners = 0;
        for i in 0..len as u64 {
            let e = d.sf.get(base + i).expect("a victim is resident");
            owners |= e.owners;
        }
        // Every owner of any line gets the one BISnp; each line awaits only
        // its own owners, so a BIRsp's other lines are known not to be theirs.
        for i in 0..len as u64 {
            let e = d.sf.get_mut(base + i).expect("resident");
            e.wait = e.owners;
            e.evicting = true;
            e.for_line = for_line;
        }
        let me = ctx.me;
        let global = self.global(me, base);
        let named = if self.is(Mutant::InvBlkTooLong) { (len + 1).min(MAX_BLOCK) } else { len };
        if !self.checked_mode() {
            d.stats.lines_invalidated += len as u64 * owners.count_ones() as u64;
        }
        self.bisnp(d, ctx, owners, global, named, true);
    }

    fn bisnp(&self, d: &mut Device, ctx: &mut Ctx<Msg, Ghost>, to: u64, base: Line, len: u8, victim: bool) {
        let mut m = to;
        while m != 0 {
            let r = m.trailing_zeros() as AgentId;
            m &= m - 1;
            ctx.send(r, S2M_BISNP, Msg::BISnp { base, len });
            if !self.checked_mode() {
                if victim {
                    d.stats.bisnp_victim += 1;
                } else {
                    d.stats.bisnp_conflict += 1;
                }
            }
        }
    }

    /// Device statistics summed over devices (timing).
    pub fn stats(agents: &[Agent]) -> DcohStats {
        let mut s = DcohStats::default();
        for a in agents {
            if let Agent::Device(d) = a {
                s.requests += d.stats.requests;
                s.bisnp_victim += d.stats.bisnp_victim;
                s.bisnp_conflict += d.stats.bisnp_conflict;
                s.lines_invalidated += d.stats.lines_invalidated;
                s.dirty_writebacks += d.stats.dirty_writebacks;
                s.waited += d.stats.waited;
                s.wait_ps += d.stats.wait_ps;
                s.hdm_h_requests += d.stats.hdm_h_requests;
            }
        }
        s
    }
}

impl Dcoh {
    /// Inclusion, data value and single writer over every requester's
    /// lines: the invariant of the checked protocol and of its program
    /// cores ([`super::dcoh_cores`], whose agents hold these).
    pub(super) fn lines_invariant<A: std::borrow::Borrow<Agent>>(
        &self,
        agents: &[A],
        ghost: &Ghost,
    ) -> Result<(), (String, String)> {
        let dev = |line: Line| match agents[self.device_of(line) as usize].borrow() {
            Agent::Device(d) => d,
            _ => unreachable!("devices follow requesters"),
        };
        // Checked systems have few lines: no allocation per state.
        let mut writer = [None::<usize>; 8];
        let mut readers = [0u32; 8];
        if self.lines > 8 {
            return Ok(()); // timed: invariants are not asserted
        }
        for (ri, a) in agents[..self.requesters].iter().enumerate() {
            let Agent::Requester(r) = a.borrow() else { unreachable!("requesters first") };
            for (line, l) in r.lines.iter() {
                if l.st == St::I {
                    continue;
                }
                let in_sf = self.is_hdm_h(line)
                    || dev(line).sf.get(self.local(line)).is_some_and(|e| e.owners & (1 << ri) != 0);
                if !in_sf {
                    return Err((
                        "inclusion".into(),
                        format!("requester {ri} caches line {line} ({:?}) but the snoop filter does not list it", l.st),
                    ));
                }
                if self.checked_mode() && l.data != ghost.last[line as usize] {
                    return Err((
                        "data value".into(),
                        format!(
                            "requester {ri} holds {} for line {line}; the last write wrote {}",
                            l.data, ghost.last[line as usize]
                        ),
                    ));
                }
                if matches!(l.st, St::E | St::M) {
                    if writer[line as usize].is_some() || readers[line as usize] > 0 {
                        return Err((
                            "single writer".into(),
                            format!("line {line}: requester {ri} holds it exclusively beside another copy"),
                        ));
                    }
                    writer[line as usize] = Some(ri);
                } else {
                    if let Some(w) = writer[line as usize] {
                        return Err((
                            "single writer".into(),
                            format!("line {line}: requester {ri} shares it while requester {w} holds it exclusively"),
                        ));
                    }
                    readers[line as usize] += 1;
                }
            }
        }
        Ok(())
    }
}

impl Protocol for Dcoh {
    type Agent = Agent;
    type Msg = Msg;
    type Ghost = Ghost;
    type Action = Action;

    fn name(&self) -> String {
        format!("dcoh ({} requesters, {} devices)", self.requesters, self.devices)
    }

    fn vc_orders(&self) -> &[ChannelOrder] {
        &self.vcs
    }

    fn initial(&self) -> Vec<(Vec<Agent>, Ghost)> {
        let mut agents = Vec::with_capacity(self.requesters + self.devices);
        let per_device = self.lines.div_ceil(self.devices as u64) as usize;
        for r in 0..self.requesters {
            let lines = match &self.timing {
                None => LineStore::small(self.lines as usize),
                Some(t) => LineStore::assoc(t.cache, t.cache_policy, t.seed.wrapping_add(r as u64)),
            };
            agents.push(Agent::Requester(Requester {
                lines,
                wbs: Vec::new(),
                snoops: Vec::new(),
                pending: 0,
                counters: Beside::default(),
            }));
        }
        for dv in 0..self.devices {
            let (sf, mem) = match &self.timing {
                None => (SnoopFilter::small(self.sf_entries, self.max_block), vec![0; per_device]),
                Some(t) => (
                    SnoopFilter::timed(t.sf, t.sf_policy, self.max_block, t.seed.wrapping_add(1000 + dv as u64)),
                    Vec::new(),
                ),
            };
            agents.push(Agent::Device(Device { sf, mem, trackers: Vec::new(), stats: DcohStats::default() }));
        }
        let ghost = Ghost { last: if self.checked_mode() { vec![0; self.lines as usize] } else { Vec::new() } };
        vec![(agents, ghost)]
    }

    /// REQUESTER (set 0): the requesters, which the devices treat alike
    /// (owner bits, trackers, BISnp to every owner). Every renaming is
    /// tried (unkeyed): the checked systems have two or three requesters.
    fn scalarsets(&self) -> Vec<Scalarset> {
        if !self.symmetry {
            return Vec::new();
        }
        vec![Scalarset { name: "REQUESTER", size: self.requesters, keyed: false, complete: false }]
    }

    fn rename(&self, r: &Renaming, from: &[Agent], to: &mut [Agent], _ghost: &mut Ghost, mail: &mut [Envelope<Msg>]) {
        let nr = self.requesters as AgentId;
        let agent = |a: AgentId| if a < nr { r.of(REQUESTER_SET, a) } else { a };
        for (i, a) in from.iter().enumerate() {
            let mut a = a.clone();
            if let Agent::Device(d) = &mut a {
                for e in d.sf.entries_mut() {
                    e.owners = r.mask(REQUESTER_SET, e.owners);
                    e.wait = r.mask(REQUESTER_SET, e.wait);
                }
                for t in &mut d.trackers {
                    t.from = agent(t.from);
                }
            }
            to[agent(i as AgentId) as usize] = a;
        }
        for e in mail.iter_mut() {
            e.to = agent(e.to);
            e.from = agent(e.from);
        }
    }

    fn on_message(
        &self,
        agent: &mut Agent,
        ctx: &mut Ctx<Msg, Ghost>,
        from: AgentId,
        msg: Msg,
    ) -> Result<Step, Violation> {
        match agent {
            Agent::Requester(r) => self.requester_message(r, ctx, from, msg),
            Agent::Device(d) => self.device_message(d, ctx, from, msg),
        }
    }

    fn actions(&self, agent: &Agent, me: AgentId, _ghost: &Ghost, out: &mut Vec<Action>) {
        match agent {
            Agent::Requester(r) => {
                if self.timing.is_some() {
                    return; // the workload drives timed requesters
                }
                for line in 0..self.lines {
                    let l = r.lines.get(line).copied();
                    let busy = l.is_some_and(|l| l.pend != Pend::None) || r.wbs.iter().any(|w| w.0 == line);
                    if busy {
                        continue;
                    }
                    let st = l.map_or(St::I, |l| l.st);
                    if r.pending < self.mshrs {
                        if st == St::I {
                            out.push(Action::Load(line));
                        }
                        if matches!(st, St::I | St::S) {
                            out.extend((0..self.values).map(|v| Action::Store(line, v)));
                        }
                    }
                    if matches!(st, St::E | St::M) {
                        out.extend((0..self.values).map(|v| Action::Store(line, v)));
                    }
                    if st != St::I {
                        out.push(Action::Evict(line));
                    }
                }
            }
            Agent::Device(d) => {
                if self.timing.is_some() {
                    return;
                }
                // The oldest request that needs room: every victim block.
                let Some(ti) = d.trackers.iter().position(|t| {
                    let k = self.local(t.line);
                    !t.room && d.sf.get(k).is_none() && !d.sf.has_room(k)
                }) else {
                    return;
                };
                let mut c = Vec::new();
                d.sf.candidates(&mut c);
                out.extend(c.into_iter().map(|(k, len)| Action::Victim {
                    tracker: ti as u8,
                    base: self.global(me, k),
                    len,
                }));
            }
        }
    }

    fn act(&self, agent: &mut Agent, ctx: &mut Ctx<Msg, Ghost>, action: Action) -> Result<(), Violation> {
        match (agent, action) {
            (Agent::Requester(r), Action::Load(line)) => self.miss(r, ctx, line, None),
            (Agent::Requester(r), Action::Store(line, v)) => match r.lines.get_mut(line) {
                Some(l) if matches!(l.st, St::E | St::M) => {
                    ctx.issued(line, OpKind::Store);
                    if !self.checked_mode() {
                        r.counters.0.hits += 1;
                    }
                    l.st = St::M;
                    l.data = v;
                    if self.checked_mode() {
                        ctx.ghost.last[line as usize] = v;
                    }
                    r.lines.touch(line);
                    ctx.done(line);
                }
                _ => self.miss(r, ctx, line, Some(v)),
            },
            (Agent::Requester(r), Action::Hit(line, store)) => {
                ctx.issued(line, if store.is_some() { OpKind::Store } else { OpKind::Load });
                if !self.checked_mode() {
                    r.counters.0.hits += 1;
                }
                let l = r.lines.get_mut(line).expect("workload_action saw the line");
                if let Some(v) = store {
                    l.st = St::M;
                    l.data = v;
                }
                r.lines.touch(line);
                ctx.done(line);
            }
            (Agent::Requester(r), Action::Evict(line)) => self.evict(r, ctx, line),
            (Agent::Device(d), Action::Victim { tracker, base, len }) => {
                let t = d.trackers[tracker as usize];
                d.trackers[tracker as usize].room = true;
                self.start_eviction(d, ctx, self.local(t.line), self.local(base), len);
            }
            (a, act) => return Err(Violation::unexpected(a, act)),
        }
        Ok(())
    }

    fn is_environment(&self, a: &Action) -> bool {
        !matches!(a, Action::Victim { .. })
    }

    fn invariant(&self, agents: &[Agent], ghost: &Ghost) -> Result<(), (String, String)> {
        self.lines_invariant(agents, ghost)
    }

    fn busy(&self, agent: &Agent) -> bool {
        match agent {
            Agent::Requester(r) => r.pending > 0 || !r.wbs.is_empty() || !r.snoops.is_empty(),
            Agent::Device(d) => !d.trackers.is_empty() || d.sf.iter().any(|(_, e)| e.busy()),
        }
    }

    fn agent_name(&self, id: AgentId) -> String {
        if (id as usize) < self.requesters {
            format!("req{id}")
        } else {
            format!("dcoh{}", self.device_index(id))
        }
    }

    fn role(&self, id: AgentId) -> Role {
        if (id as usize) < self.requesters {
            Role::Core
        } else {
            Role::Home
        }
    }

    /// Timed, the workload drives the requesters and a device picks its
    /// victims itself (no action of its own).
    fn has_actions(&self, _id: AgentId) -> bool {
        self.timing.is_none()
    }

    fn carries_data(&self, msg: &Msg) -> bool {
        self.data_lines(msg) > 0
    }

    fn data_lines(&self, msg: &Msg) -> u32 {
        match msg {
            Msg::MemData { .. } | Msg::MemWr { .. } => 1,
            Msg::BIRsp { dirty, .. } => dirty.count_ones(),
            _ => 0,
        }
    }

    /// A BISnp looks up every line it names in the requester's cache (ESF
    /// §V-C: longer InvBlk blocks cost more requester cache accesses).
    fn cache_accesses(&self, msg: &Msg) -> u32 {
        match msg {
            Msg::BISnp { len, .. } => u32::from(*len),
            _ => 1,
        }
    }

    fn stats(&self, agents: &[Agent]) -> Vec<(String, f64)> {
        let s = Dcoh::stats(agents);
        let mean_wait = if s.waited == 0 { 0.0 } else { s.wait_ps as f64 / s.waited as f64 / 1000.0 };
        let mut v = vec![
            ("dcoh_requests".into(), s.requests as f64),
            ("bisnp_victim".into(), s.bisnp_victim as f64),
            ("bisnp_conflict".into(), s.bisnp_conflict as f64),
            ("lines_invalidated".into(), s.lines_invalidated as f64),
            ("dirty_writebacks".into(), s.dirty_writebacks as f64),
            ("requests_waiting_for_bi".into(), s.waited as f64),
            ("mean_bi_wait_ns".into(), mean_wait),
            // Over every device request, so policies compare on the same base.
            ("bi_wait_per_request_ns".into(), s.wait_ps as f64 / s.requests.max(1) as f64 / 1000.0),
        ];
        if self.hdm_h > 0 {
            // Only systems with an HDM-H region list it: other outputs stay as they were.
            v.push(("hdm_h_requests".into(), s.hdm_h_requests as f64));
        }
        v
    }

    fn max_data_lines(&self) -> u32 {
        self.max_block as u32
    }

    /// A timed requester's cache (a checked one counts nothing).
    fn cache_counters(&self, agent: &Agent) -> Option<CacheCounters> {
        match agent {
            Agent::Requester(r) if !self.checked_mode() => Some(r.counters.0),
            _ => None,
        }
    }

    fn vc_names(&self) -> Vec<String> {
        CHANNELS.iter().map(|s| s.to_string()).collect()
    }

    fn workload_action(&self, agent: &Agent, _me: AgentId, op: &WorkOp) -> Option<Action> {
        let Agent::Requester(r) = agent else { return None };
        let line = op.line % self.lines;
        let l = r.lines.get(line).copied();
        if l.is_some_and(|l| l.pend != Pend::None) || r.wbs.iter().any(|w| w.0 == line) {
            return None;
        }
        if (self.sc || op.order == OpOrder::Release) && r.pending > 0 {
            return None;
        }
        let store = matches!(op.kind, OpKind::Store | OpKind::Rmw);
        let st = l.map_or(St::I, |l| l.st);
        match (st, store) {
            (St::S | St::E | St::M, false) | (St::E | St::M, true) => {
                return Some(Action::Hit(line, store.then_some(0)))
            }
            _ => {}
        }
        if r.pending >= self.mshrs {
            return None;
        }
        if !r.lines.has_room(line) && r.lines.victim_where(line, |_, l| l.pend == Pend::None).is_none() {
            return None;
        }
        Some(if store { Action::Store(line, 0) } else { Action::Load(line) })
    }
}
