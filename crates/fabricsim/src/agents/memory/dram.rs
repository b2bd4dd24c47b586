//! A DRAM behind a memory controller: channels, ranks, banks with a row
//! buffer (open- or closed-page), the JEDEC core timings (tRCD, tCL, tRP,
//! tRAS, the burst time, tRFC every tREFI) and an FR-FCFS scheduler per
//! channel over a bounded request queue. See docs/dram.md.
//!
//! The model is engine-agnostic: a caller enqueues requests on a channel
//! and calls [`Dram::step`] at the times the channel asks to be woken
//! (`Step::next`); a step issues every command that is legal at that time
//! and returns the one read or write whose column command it issued, with
//! the time its last data beat leaves the DRAM. Nothing allocates after
//! construction: the queues and bank tables are sized by the parameters.
//!
//! Simplifications (docs/dram.md lists them): the command bus is not a
//! resource (commands to different banks may issue at the same instant);
//! bank groups (tCCD_L, tRRD_L), tRRD, tFAW, tRTP, tWR and tWTR are not
//! modelled; a write is timed as a read (tCWL = tCL); a request longer than
//! one burst takes consecutive bursts in one row of one channel.

use crate::engine::units::Duration;
use crate::engine::Time;

/// Row-buffer policy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Page {
    /// A row stays open after an access; a hit needs only a column command.
    Open,
    /// Every access ends with an auto-precharge (the next access to the
    /// bank activates again).
    Closed,
}

impl Page {
    /// The address mapping that suits the policy (used unless `mapping` is given).
    pub fn default_mapping(self) -> [Field; 5] {
        let m = match self {
            Page::Open => DEFAULT_MAPPING,
            Page::Closed => DEFAULT_MAPPING_CLOSED,
        };
        parse_mapping(m).expect("valid default mapping")
    }
}

/// An address field of the mapping.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Field {
    Row,
    Rank,
    Bank,
    Column,
    Channel,
}

impl Field {
    fn parse(s: &str) -> Option<Field> {
        Some(match s {
            "row" => Field::Row,
            "rank" => Field::Rank,
            "bank" => Field::Bank,
            "column" => Field::Column,
            "channel" => Field::Channel,
            _ => return None,
        })
    }
}

/// The default mapping under the open-page policy, most significant field
/// first: consecutive bursts (64 B lines) go to consecutive channels, then
/// fill a row of each channel (row hits), then move to the next bank, rank
/// and row (gem5's RoRaBaCoCh).
pub const DEFAULT_MAPPING: &str = "row:rank:bank:column:channel";

/// The default mapping under the closed-page policy: consecutive bursts go
/// to consecutive channels, then banks, then ranks, so a stream spreads
/// its activates over the banks (gem5's RoCoRaBaCh).
pub const DEFAULT_MAPPING_CLOSED: &str = "row:column:rank:bank:channel";

/// Parse a mapping such as `row:rank:bank:column:channel`: each of the five
/// fields once, most significant first; `row` first, since it takes every
/// address bit above the others.
pub fn parse_mapping(s: &str) -> Result<[Field; 5], String> {
    let expected = "the five fields row, rank, bank, column, channel once each, most significant first, \
                    row first (e.g. \"row:rank:bank:column:channel\")";
    let parts: Vec<&str> = s.split(':').map(str::trim).collect();
    if parts.len() != 5 {
        return Err(format!("{s:?}: expected {expected}"));
    }
    let mut out = [Field::Row; 5];
    for (i, p) in parts.iter().enumerate() {
        let f = Field::parse(p).ok_or_else(|| format!("{s:?}: unknown field {p:?}; expected {expected}"))?;
        if out[..i].contains(&f) && i > 0 {
            return Err(format!("{s:?}: field {p:?} appears twice; expected {expected}"));
        }
        out[i] = f;
    }
    if out[0] != Field::Row {
        return Err(format!("{s:?}: `row` must come first; expected {expected}"));
    }
    Ok(out)
}

/// A JEDEC speed bin with the organisation of a typical x8 device.
///
/// Core timings are in clock cycles (nCK) as the speed-bin tables give
/// them; tCK = 2000 / data rate (MT/s) ns. Refresh timings are in ps.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Preset {
    pub name: &'static str,
    /// JEDEC speed bin the core timings come from.
    pub speed_bin: &'static str,
    /// Data rate in MT/s.
    pub rate_mts: u64,
    /// Data bus of one channel, bits.
    pub channel_bits: u32,
    /// Burst length (beats); one burst moves channel_bits × BL / 8 bytes in BL/2 clocks.
    pub burst_length: u32,
    pub cl: u64,
    pub rcd: u64,
    pub rp: u64,
    pub ras: u64,
    pub trfc: Time,
    pub trefi: Time,
    /// Banks per rank (bank groups × banks per group).
    pub banks: u32,
    /// Row buffer of one rank on one channel (device page size × devices).
    pub row_bytes: u32,
    /// Channels of the preset's default memory: DDR4: one 64-bit channel;
    /// DDR5: the two 32-bit subchannels of one DIMM.
    pub channels: u32,
}

/// DDR4-3200AA and DDR5-4800B (JESD79-4 / JESD79-5 speed bins).
///
/// DDR4-3200AA (JESD79-4D, speed bin table): tCK 0.625 ns; CL-tRCD-tRP
/// 22-22-22 (tAA = tRCD = tRP = 13.75 ns); tRAS(min) 32 ns → 52 nCK
/// (32.5 ns); 8 Gb x8 die: tRFC1 350 ns, 4 bank groups × 4 banks, 1 KB
/// page (8 KB per rank of eight x8 devices); tREFI 7.8 µs (0-85 °C); BL8
/// on a 64-bit channel: 64 B per burst in 4 nCK = 2.5 ns, 25.6 GB/s.
///
/// DDR5-4800B (JESD79-5, speed bin table): tCK 0.416 ns (2000/4800 ns);
/// CL-tRCD-tRP 40-39-39 (tAA 16.67 ns, tRCD = tRP = 16.25 ns); tRAS(min)
/// 32 ns → 77 nCK (32.08 ns); 16 Gb x8 die: tRFC1 295 ns, 8 bank groups ×
/// 4 banks, 1 KB page (4 KB per rank of four x8 devices on a 32-bit
/// subchannel); tREFI 3.9 µs (normal refresh); BL16 on a 32-bit
/// subchannel: 64 B per burst in 8 nCK = 3.33 ns, 19.2 GB/s; a DIMM has
/// two subchannels (38.4 GB/s).
pub const PRESETS: [Preset; 2] = [
    Preset {
        name: "DDR4-3200",
        speed_bin: "DDR4-3200AA (JESD79-4)",
        rate_mts: 3200,
        channel_bits: 64,
        burst_length: 8,
        cl: 22,
        rcd: 22,
        rp: 22,
        ras: 52,
        trfc: 350_000,
        trefi: 7_800_000,
        banks: 16,
        row_bytes: 8192,
        channels: 1,
    },
    Preset {
        name: "DDR5-4800",
        speed_bin: "DDR5-4800B (JESD79-5)",
        rate_mts: 4800,
        channel_bits: 32,
        burst_length: 16,
        cl: 40,
        rcd: 39,
        rp: 39,
        ras: 77,
        trfc: 295_000,
        trefi: 3_900_000,
        banks: 32,
        row_bytes: 4096,
        channels: 2,
    },
];

impl Preset {
    /// The preset of this name (case-insensitive).
    pub fn find(name: &str) -> Option<&'static Preset> {
        PRESETS.iter().find(|p| p.name.eq_ignore_ascii_case(name))
    }

    pub fn names() -> String {
        PRESETS.iter().map(|p| format!("{:?}", p.name)).collect::<Vec<_>>().join(", ")
    }

    /// `n` clock cycles in ps, rounded to the nearest ps.
    pub fn ck(&self, n: u64) -> Time {
        (n * 2_000_000 + self.rate_mts / 2) / self.rate_mts
    }

    pub fn params(&self) -> DramParams {
        DramParams {
            preset: self.name,
            channels: self.channels,
            ranks: 1,
            banks: self.banks,
            row_bytes: self.row_bytes,
            burst_bytes: self.channel_bits * self.burst_length / 8,
            page: Page::Open,
            mapping: Page::Open.default_mapping(),
            trcd: self.ck(self.rcd),
            tcl: self.ck(self.cl),
            trp: self.ck(self.rp),
            tras: self.ck(self.ras),
            tburst: self.ck(self.burst_length as u64 / 2),
            trfc: self.trfc,
            trefi: self.trefi,
            channel_queue: 32,
        }
    }
}

/// The parameters of one DRAM: a preset with any overrides applied.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DramParams {
    pub preset: &'static str,
    pub channels: u32,
    pub ranks: u32,
    /// Banks per rank.
    pub banks: u32,
    /// Row buffer of one rank on one channel, bytes.
    pub row_bytes: u32,
    /// Bytes one burst moves (the column granule; 64 B for both presets).
    pub burst_bytes: u32,
    pub page: Page,
    /// Address fields, most significant first.
    pub mapping: [Field; 5],
    /// ACT to column command.
    pub trcd: Time,
    /// Column command to first data (CAS latency, tAA).
    pub tcl: Time,
    /// PRE to ACT.
    pub trp: Time,
    /// ACT to PRE, minimum.
    pub tras: Time,
    /// One burst on the data bus (BL / 2 clocks).
    pub tburst: Time,
    /// Refresh cycle: all banks of a rank blocked this long...
    pub trfc: Time,
    /// ...every tREFI (0: no refresh).
    pub trefi: Time,
    /// Requests a channel's scheduler holds; more wait (back-pressure).
    pub channel_queue: u32,
}

/// Largest channels × ranks × banks accepted (bank state is allocated up front).
pub const MAX_BANKS: u64 = 1 << 16;

impl DramParams {
    /// Check the parameters; on error, the key at fault and why.
    pub fn validate(&self) -> Result<(), (&'static str, String)> {
        let at_least_1 = |key: &'static str, v: u32| {
            if v == 0 {
                Err((key, "0: expected at least 1".to_string()))
            } else {
                Ok(())
            }
        };
        at_least_1("channels", self.channels)?;
        at_least_1("ranks", self.ranks)?;
        at_least_1("banks", self.banks)?;
        at_least_1("channel_queue", self.channel_queue)?;
        let total = self.channels as u64 * self.ranks as u64 * self.banks as u64;
        if total > MAX_BANKS {
            return Err((
                "banks",
                format!(
                    "{} channels × {} ranks × {} banks = {total}: expected at most {MAX_BANKS} banks in all",
                    self.channels, self.ranks, self.banks
                ),
            ));
        }
        if self.row_bytes < self.burst_bytes || !self.row_bytes.is_multiple_of(self.burst_bytes) {
            return Err((
                "row_size",
                format!("{}B: expected a multiple of the {}-byte burst", self.row_bytes, self.burst_bytes),
            ));
        }
        if self.tburst == 0 {
            return Err(("tburst", "0ns: expected a positive time".into()));
        }
        if self.trefi != 0 && self.trfc >= self.trefi {
            return Err((
                "trfc",
                format!(
                    "trfc {} >= trefi {}: a refresh would never end; expected trfc < trefi, or trefi = \"0ns\" \
                     for no refresh",
                    Duration(self.trfc),
                    Duration(self.trefi)
                ),
            ));
        }
        Ok(())
    }

    /// Peak data bandwidth of all channels, GB/s.
    pub fn peak_gbps(&self) -> f64 {
        self.channels as f64 * self.burst_bytes as f64 / (self.tburst as f64 / 1e12) / 1e9
    }

    /// Idle read to a closed bank: ACT, column command, first data, burst.
    pub fn idle_read(&self) -> Time {
        self.trcd + self.tcl + self.tburst
    }

    fn lines_per_row(&self) -> u64 {
        (self.row_bytes / self.burst_bytes) as u64
    }

    /// Where an address lives.
    pub fn locate(&self, addr: u64) -> Location {
        let mut x = addr / self.burst_bytes as u64;
        let mut loc = Location { channel: 0, rank: 0, bank: 0, row: 0, column: 0 };
        for f in self.mapping.iter().rev() {
            let n = match f {
                Field::Row => continue,
                Field::Rank => self.ranks as u64,
                Field::Bank => self.banks as u64,
                Field::Column => self.lines_per_row(),
                Field::Channel => self.channels as u64,
            };
            let v = (x % n) as u32;
            x /= n;
            match f {
                Field::Rank => loc.rank = v,
                Field::Bank => loc.bank = v,
                Field::Column => loc.column = v,
                Field::Channel => loc.channel = v,
                Field::Row => unreachable!(),
            }
        }
        loc.row = x;
        loc
    }
}

/// Channel, rank, bank, row and column (in bursts) of an address.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Location {
    pub channel: u32,
    pub rank: u32,
    pub bank: u32,
    pub row: u64,
    pub column: u32,
}

/// Counters over a run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DramStats {
    /// Requests served (column accesses, however many bursts).
    pub accesses: u64,
    /// Served without an ACT of their own: the row was open.
    pub row_hits: u64,
    /// Needed an ACT only (the bank was precharged).
    pub row_empty: u64,
    /// Needed a PRE and an ACT (another row was open).
    pub row_conflicts: u64,
    pub activates: u64,
    pub precharges: u64,
    pub refreshes: u64,
    /// Data-bus time, summed over channels.
    pub bus_busy_ps: Time,
    /// Channels (sub-channels) whose bus time `bus_busy_ps` sums.
    pub channels: u32,
}

impl DramStats {
    pub fn row_hit_rate(&self) -> f64 {
        if self.accesses == 0 {
            0.0
        } else {
            self.row_hits as f64 / self.accesses as f64
        }
    }
}

const NO_ROW: u64 = u64::MAX;

#[derive(Debug, Clone, Copy)]
struct Bank {
    /// Open row, or NO_ROW.
    row: u64,
    /// Earliest ACT (after tRP, or a refresh).
    act_ready: Time,
    /// Earliest column command to the open row (ACT + tRCD).
    col_ready: Time,
    /// Earliest PRE (ACT + tRAS).
    pre_ready: Time,
    /// Queued requests to the open row (kept as requests come and go and
    /// rows open and close, so no step recounts them all).
    hits: u32,
    /// Stamp of the scheduling pass that met the bank's oldest request.
    seen: u32,
}

#[derive(Debug, Clone, Copy)]
struct Entry {
    id: u32,
    /// Flat bank index: rank × banks + bank.
    bank: u32,
    row: u64,
    arrival: Time,
    bursts: u32,
    /// Time of the PRE / ACT issued for this request (excluded from its queueing delay).
    prep: Time,
    pre: bool,
    act: bool,
}

struct Channel {
    banks: Vec<Bank>,
    /// Requests in arrival order (oldest first).
    queue: Vec<Entry>,
    bus_free: Time,
    next_refresh: Vec<Time>,
    wake_at: Option<Time>,
    /// The scheduling pass (stamps `Bank::seen`).
    epoch: u32,
}

/// A column command the step issued.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Issued {
    /// The caller's id of the request.
    pub id: u32,
    /// When its last data beat leaves the DRAM.
    pub done: Time,
    /// Time it waited in the queue beyond its own PRE/ACT (for the bus,
    /// other requests' banks, refresh).
    pub queued: Time,
}

/// What a step did and when the channel next needs a step.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Step {
    pub issued: Option<Issued>,
    /// The earliest time a command may become legal (None: queue empty).
    pub next: Option<Time>,
}

pub struct Dram {
    pub params: DramParams,
    channels: Vec<Channel>,
    pub stats: DramStats,
    layout: Option<Layout>,
}

/// `DramParams::locate` as shifts and masks when every size is a power of
/// two (the usual case), worked out once: a request used to pay eight
/// 64-bit divisions. `None`: other sizes, which divide.
#[derive(Debug, Clone, Copy)]
struct Layout {
    /// (shift, mask) of channel, rank, bank and column in the address.
    fields: [(u32, u64); 4],
    /// Shift of the row.
    row: u32,
}

impl Layout {
    fn new(p: &DramParams) -> Option<Self> {
        let log2 = |n: u64| n.is_power_of_two().then(|| n.trailing_zeros());
        let mut at = log2(p.burst_bytes as u64)?;
        let mut fields = [(0, 0); 4];
        for f in p.mapping.iter().rev() {
            let (i, n) = match f {
                Field::Row => continue,
                Field::Channel => (0, p.channels as u64),
                Field::Rank => (1, p.ranks as u64),
                Field::Bank => (2, p.banks as u64),
                Field::Column => (3, p.lines_per_row()),
            };
            fields[i] = (at, n - 1);
            at += log2(n)?;
        }
        Some(Layout { fields, row: at })
    }

    #[inline]
    fn locate(&self, addr: u64) -> Location {
        let f = |i: usize| ((addr >> self.fields[i].0) & self.fields[i].1) as u32;
        Location { channel: f(0), rank: f(1), bank: f(2), column: f(3), row: addr >> self.row }
    }
}

impl Dram {
    /// A DRAM with every bank precharged. `params` must be valid.
    pub fn new(params: DramParams) -> Self {
        let nb = (params.ranks * params.banks) as usize;
        let bank = Bank { row: NO_ROW, act_ready: 0, col_ready: 0, pre_ready: 0, hits: 0, seen: 0 };
        let channels = (0..params.channels)
            .map(|_| Channel {
                banks: vec![bank; nb],
                queue: Vec::with_capacity(params.channel_queue as usize),
                bus_free: 0,
                // Ranks refresh staggered over the interval.
                next_refresh: (0..params.ranks as u64)
                    .map(|r| if params.trefi == 0 { Time::MAX } else { params.trefi * (r + 1) / params.ranks as u64 })
                    .collect(),
                wake_at: None,
                epoch: 0,
            })
            .collect();
        let stats = DramStats { channels: params.channels, ..DramStats::default() };
        let layout = Layout::new(&params);
        Dram { params, channels, stats, layout }
    }

    pub fn channel_of(&self, addr: u64) -> u32 {
        self.locate(addr).channel
    }

    #[inline]
    fn locate(&self, addr: u64) -> Location {
        match &self.layout {
            Some(l) => l.locate(addr),
            None => self.params.locate(addr),
        }
    }

    /// Whether channel `ch`'s queue has room for one more request.
    pub fn has_room(&self, ch: u32) -> bool {
        let c = &self.channels[ch as usize];
        c.queue.len() < self.params.channel_queue as usize
    }

    pub fn queued(&self, ch: u32) -> usize {
        self.channels[ch as usize].queue.len()
    }

    /// Queue a request of `bytes` at `addr`, known to the caller as `id`;
    /// returns its channel, which the caller must then `step` at `now`.
    /// Panics if the channel's queue is full (check `has_room`).
    pub fn enqueue(&mut self, now: Time, id: u32, addr: u64, bytes: u32) -> u32 {
        let loc = self.locate(addr);
        let p = &self.params;
        let bursts = bytes.div_ceil(p.burst_bytes).max(1);
        let bank = loc.rank * p.banks + loc.bank;
        let c = &mut self.channels[loc.channel as usize];
        assert!(c.queue.len() < p.channel_queue as usize, "DRAM channel {} queue is full", loc.channel);
        if c.banks[bank as usize].row == loc.row {
            c.banks[bank as usize].hits += 1;
        }
        c.queue.push(Entry { id, bank, row: loc.row, arrival: now, bursts, prep: 0, pre: false, act: false });
        loc.channel
    }

    /// Step channel `ch` at `now` (as [`Dram::step`]) and claim its next
    /// step: returns the column command issued, and the time at which the
    /// caller must schedule a step of `ch` — None when the queue is empty or
    /// an earlier step is already pending.
    pub fn advance(&mut self, now: Time, ch: u32) -> (Option<Issued>, Option<Time>) {
        let s = self.step(now, ch);
        (s.issued, s.next.filter(|&t| self.want_wake(ch, t)))
    }

    /// Ask for a step of `ch` at `t`: true if the caller must schedule one
    /// (no earlier step is pending).
    fn want_wake(&mut self, ch: u32, t: Time) -> bool {
        let c = &mut self.channels[ch as usize];
        match c.wake_at {
            Some(w) if w <= t => false,
            _ => {
                c.wake_at = Some(t);
                true
            }
        }
    }

    /// A scheduled step for `ch` fired at `now`: true if it is the pending
    /// one (else it was superseded by an earlier one and is stale).
    pub fn take_wake(&mut self, ch: u32, now: Time) -> bool {
        let c = &mut self.channels[ch as usize];
        if c.wake_at == Some(now) {
            c.wake_at = None;
            true
        } else {
            false
        }
    }

    /// Apply every refresh of `ch` due by `now`: at each tREFI tick the
    /// rank's open banks precharge (not before tRAS), then REF blocks all
    /// its banks for tRFC. Commands issue only in steps, and a step applies
    /// due refreshes first, so applying them late changes nothing.
    fn refresh(&mut self, ch: usize, now: Time) {
        let p = &self.params;
        let c = &mut self.channels[ch];
        let nb = p.banks as usize;
        for r in 0..p.ranks as usize {
            while c.next_refresh[r] <= now {
                let t = c.next_refresh[r];
                let banks = &mut c.banks[r * nb..(r + 1) * nb];
                let mut start = t;
                for b in banks.iter() {
                    let ready = if b.row != NO_ROW { t.max(b.pre_ready) + p.trp } else { b.act_ready };
                    start = start.max(ready);
                }
                for b in banks.iter_mut() {
                    if b.row != NO_ROW {
                        self.stats.precharges += 1;
                    }
                    b.row = NO_ROW;
                    b.act_ready = start + p.trfc;
                    b.hits = 0;
                }
                c.next_refresh[r] = t + p.trefi;
                self.stats.refreshes += 1;
            }
        }
    }

    /// A new pass over a channel's queue: no bank seen yet.
    fn new_pass(c: &mut Channel) -> u32 {
        c.epoch = c.epoch.wrapping_add(1);
        if c.epoch == 0 {
            for b in &mut c.banks {
                b.seen = 0;
            }
            c.epoch = 1;
        }
        c.epoch
    }

    /// FR-FCFS's row commands for request `q`, the oldest of bank `b`, if
    /// no queued request hits the bank's open row (it stays open while a
    /// hit waits): PRE and/or ACT, as their timings allow at `now`.
    #[inline]
    fn row_command(p: &DramParams, b: &mut Bank, q: &mut Entry, stats: &mut DramStats, now: Time) {
        if b.hits > 0 {
            return;
        }
        if b.row != NO_ROW && b.pre_ready <= now {
            b.row = NO_ROW;
            b.act_ready = b.act_ready.max(now + p.trp);
            q.pre = true;
            q.prep += p.trp;
            stats.precharges += 1;
        }
        if b.row == NO_ROW && b.act_ready <= now {
            b.row = q.row;
            b.col_ready = now + p.trcd;
            b.pre_ready = now + p.tras;
            q.act = true;
            q.prep += p.trcd;
            stats.activates += 1;
        }
    }

    /// Issue every command legal on channel `ch` at `now` under FR-FCFS:
    /// the oldest request whose row is open and ready gets the data bus
    /// (row hits first, then age); a bank with no queued hit to its open
    /// row is precharged and activated for its oldest request. Returns the
    /// column command issued (at most one: the burst holds the bus) and
    /// when the channel next needs a step.
    ///
    /// One pass over the queue does the row commands and finds the column
    /// command: a bank's row commands come at its oldest request, before
    /// any other request of that bank is looked at, and an ACT makes no
    /// request ready now (tRCD), so the first ready hit met on the way is
    /// the one a look after all row commands would find. The pass also
    /// recounts each bank's hits, since an ACT opens a row.
    pub fn step(&mut self, now: Time, ch: u32) -> Step {
        let ch = ch as usize;
        self.refresh(ch, now);
        let p = &self.params;
        let c = &mut self.channels[ch];
        let bus_ok = c.bus_free <= now + p.tcl;
        let mut column = None;
        let e = Self::new_pass(c);
        for (i, q) in c.queue.iter_mut().enumerate() {
            let b = &mut c.banks[q.bank as usize];
            if b.seen != e {
                b.seen = e;
                Self::row_command(p, b, q, &mut self.stats, now);
                // Recounted from here on: every request of the bank is at or after its oldest.
                b.hits = 0;
            }
            if b.row == q.row {
                b.hits += 1;
                if bus_ok && column.is_none() && b.col_ready <= now {
                    column = Some(i);
                }
            }
        }

        let mut issued = None;
        if let Some(i) = column {
            let q = c.queue.remove(i);
            let bi = q.bank as usize;
            c.banks[bi].hits -= 1;
            let burst_time = q.bursts as Time * p.tburst;
            let done = now + p.tcl + burst_time;
            c.bus_free = done;
            let b = &mut c.banks[bi];
            if p.page == Page::Closed {
                // Auto-precharge after the last column command, not before tRAS.
                let pre = (now + burst_time - p.tburst).max(b.pre_ready);
                b.row = NO_ROW;
                b.act_ready = pre + p.trp;
                b.hits = 0;
                self.stats.precharges += 1;
            }
            let s = &mut self.stats;
            s.accesses += 1;
            s.bus_busy_ps += burst_time;
            match (q.pre, q.act) {
                (_, false) => s.row_hits += 1,
                (false, true) => s.row_empty += 1,
                (true, true) => s.row_conflicts += 1,
            }
            issued = Some(Issued { id: q.id, done, queued: (now - q.arrival).saturating_sub(q.prep) });
            // The bank it served may now precharge for an older miss (no
            // other bank's row commands change: they ran at this `now`).
            if let Some(j) = c.queue.iter().position(|r| r.bank == q.bank) {
                let b = &mut c.banks[bi];
                Self::row_command(p, b, &mut c.queue[j], &mut self.stats, now);
                if b.hits == 0 && b.row == c.queue[j].row {
                    // (an ACT just now, with tRP = 0)
                    let row = b.row;
                    b.hits = c.queue.iter().filter(|r| r.bank == q.bank && r.row == row).count() as u32;
                }
            }
        }

        // When can the next command issue? Per bank with requests: its
        // hits' column command, else its oldest's PRE or ACT.
        let mut next = Time::MAX;
        let col_bus = c.bus_free.saturating_sub(p.tcl);
        for q in &c.queue {
            let b = &c.banks[q.bank as usize];
            let t = if b.hits > 0 {
                b.col_ready.max(col_bus)
            } else if b.row != NO_ROW {
                b.pre_ready
            } else {
                b.act_ready
            };
            next = next.min(t);
        }
        let next = (next != Time::MAX).then(|| next.max(now + 1));
        Step { issued, next }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn presets_match_their_speed_bins() {
        let d4 = Preset::find("ddr4-3200").unwrap().params();
        assert_eq!((d4.tcl, d4.trcd, d4.trp, d4.tras, d4.tburst), (13_750, 13_750, 13_750, 32_500, 2_500));
        assert!((d4.peak_gbps() - 25.6).abs() < 1e-9);
        let d5 = Preset::find("DDR5-4800").unwrap().params();
        assert_eq!((d5.tcl, d5.trcd, d5.trp, d5.tras, d5.tburst), (16_667, 16_250, 16_250, 32_083, 3_333));
        assert!((d5.peak_gbps() - 38.4).abs() < 0.01, "{}", d5.peak_gbps());
    }

    #[test]
    fn mapping_is_mixed_radix_most_significant_first() {
        let mut p = Preset::find("DDR5-4800").unwrap().params();
        // 2 channels, 64 lines a row, 32 banks
        assert_eq!(p.locate(0).channel, 0);
        assert_eq!(p.locate(64).channel, 1);
        assert_eq!(p.locate(128), Location { channel: 0, rank: 0, bank: 0, row: 0, column: 1 });
        assert_eq!(p.locate(64 * 2 * 64).bank, 1);
        assert_eq!(p.locate(64 * 2 * 64 * 32).row, 1);
        p.mapping = parse_mapping("row:channel:rank:bank:column").unwrap();
        assert_eq!(p.locate(64), Location { channel: 0, rank: 0, bank: 0, row: 0, column: 1 });
        // The shifts and masks agree with the divisions.
        for mapping in ["row:rank:bank:column:channel", "row:column:rank:bank:channel", "row:channel:rank:bank:column"]
        {
            p.mapping = parse_mapping(mapping).unwrap();
            p.ranks = 2;
            let l = Layout::new(&p).expect("powers of two");
            for a in (0..1u64 << 24).step_by(4093) {
                assert_eq!(l.locate(a), p.locate(a), "{mapping} {a}");
            }
        }
        p.banks = 12;
        assert!(Layout::new(&p).is_none());
        assert!(parse_mapping("rank:row:bank:column:channel").is_err());
        assert!(parse_mapping("row:row:bank:column:channel").is_err());
        assert!(parse_mapping("row:bank:column:channel").is_err());
    }
}
