//! A DRAM behind a memory controller: channels, ranks, bank groups and
//! banks with a row buffer (open- or closed-page), the JEDEC timings (tRCD,
//! tCL, tCWL, tRP, tRAS, tCCD_S/L, tRRD_S/L, tFAW, tWR, tWTR_S/L, tRTP,
//! rank-to-rank switching tRTRS, tRFC every tREFI), one command per
//! command-bus clock, and per channel a read queue and a write queue served
//! FR-FCFS, writes drained between a high and a low watermark. A request
//! can issue its first command `frontend` clocks after it arrives (the
//! controller's front end); reads handed to their banks before a drain
//! began keep issuing during it. See docs/dram.md.
//!
//! The model is engine-agnostic: a caller enqueues requests on a channel
//! and calls [`Dram::step`] at the times the channel asks to be woken
//! (`Step::next`); a step issues at most one command (the command bus
//! carries one per clock) and returns the read or write whose column
//! command it issued, with the time its last data beat leaves (a read) or
//! enters (a write) the DRAM. Nothing allocates after construction: the
//! queues and bank tables are sized by the parameters.
//!
//! Simplifications (docs/dram.md lists them): commands issue at any
//! picosecond the timings allow, spaced by at least tCK, not on clock
//! edges; a request longer than one burst takes consecutive bursts in one
//! row of one channel as one column command; reads are not served from
//! the write queue; FR-FCFS has no cap on row hits.

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
/// Timings are in clock cycles (nCK), as the speed-bin and timing tables
/// give them (a `max(n nCK, t ns)` rounded up to whole clocks); tCK = 2000
/// / data rate (MT/s) ns. Refresh timings are in ps.
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
    pub cwl: u64,
    pub rcd: u64,
    pub rp: u64,
    pub ras: u64,
    pub ccd_s: u64,
    pub ccd_l: u64,
    pub rrd_s: u64,
    pub rrd_l: u64,
    pub faw: u64,
    pub wr: u64,
    pub wtr_s: u64,
    pub wtr_l: u64,
    pub rtp: u64,
    pub rtrs: u64,
    pub trfc: Time,
    pub trefi: Time,
    /// Bank groups per rank.
    pub bank_groups: u32,
    /// Banks per rank (bank groups × banks per group).
    pub banks: u32,
    /// Row buffer of one rank on one channel (device page size × devices).
    pub row_bytes: u32,
    /// Channels of the preset's default memory: DDR4: one 64-bit channel;
    /// DDR5: the two 32-bit subchannels of one DIMM.
    pub channels: u32,
}

/// DDR4-2400R, DDR4-3200AA and DDR5-4800B: core timings from the JEDEC
/// speed-bin tables (JESD79-4 for DDR4, JESD79-5 for DDR5), the others from
/// the standards' timing-parameter tables for the data rate (x8 devices,
/// 1 KB page), each as max(nCK, ns) rounded up to whole clocks; the
/// organisation is an 8 Gb x8 DDR4 die (Micron MT40A1G8) and a 16 Gb x8
/// DDR5 die (Micron MT60B2G8). docs/dram.md has the same table.
///
/// tRTRS is not a JEDEC parameter: it is the controller's bus turnaround
/// between ranks (and between a read and a write), one clock on DDR4 as in
/// DRAMsim3's DDR4 configurations, two on DDR5 as in Ramulator 2's DDR5.
pub const PRESETS: [Preset; 3] = [
    Preset {
        name: "DDR4-2400",
        speed_bin: "DDR4-2400R (JESD79-4)",
        rate_mts: 2400, // tCK 0.833 ns
        channel_bits: 64,
        burst_length: 8,  // BL8: 64 B in 4 nCK = 3.333 ns, 19.2 GB/s
        cl: 17,           // JESD79-4 DDR4-2400R: tAA 14.16 ns = 17 nCK
        cwl: 12,          // JESD79-4 CWL for 2400, 1 tCK write preamble
        rcd: 17,          // JESD79-4 DDR4-2400R: tRCD 14.16 ns
        rp: 17,           // JESD79-4 DDR4-2400R: tRP 14.16 ns
        ras: 39,          // JESD79-4: tRAS(min) 32 ns → 38.4 → 39 nCK
        ccd_s: 4,         // JESD79-4: tCCD_S 4 nCK
        ccd_l: 6,         // JESD79-4 DDR4-2400: tCCD_L max(5 nCK, 5 ns) = 6 nCK
        rrd_s: 4,         // JESD79-4 DDR4-2400, 1 KB page: tRRD_S max(4 nCK, 3.3 ns) = 4 nCK
        rrd_l: 6,         // JESD79-4 DDR4-2400, 1 KB page: tRRD_L max(4 nCK, 4.9 ns) = 6 nCK
        faw: 26,          // JESD79-4 DDR4-2400, 1 KB page: tFAW max(20 nCK, 21 ns) = 26 nCK
        wr: 18,           // JESD79-4: tWR 15 ns = 18 nCK
        wtr_s: 3,         // JESD79-4: tWTR_S max(2 nCK, 2.5 ns) = 3 nCK
        wtr_l: 9,         // JESD79-4: tWTR_L max(4 nCK, 7.5 ns) = 9 nCK
        rtp: 9,           // JESD79-4: tRTP max(4 nCK, 7.5 ns) = 9 nCK
        rtrs: 1,          // not JEDEC: DRAMsim3's DDR4 tRTRS
        trfc: 350_000,    // JESD79-4, 8 Gb die: tRFC1 350 ns
        trefi: 7_800_000, // JESD79-4: tREFI 7.8 µs (0-85 °C)
        bank_groups: 4,   // 8 Gb x8 (MT40A1G8): 4 bank groups × 4 banks
        banks: 16,
        row_bytes: 8192, // 1 KB page × 8 x8 devices on a 64-bit channel
        channels: 1,
    },
    Preset {
        name: "DDR4-3200",
        speed_bin: "DDR4-3200AA (JESD79-4)",
        rate_mts: 3200, // tCK 0.625 ns
        channel_bits: 64,
        burst_length: 8,  // BL8: 64 B in 4 nCK = 2.5 ns, 25.6 GB/s
        cl: 22,           // JESD79-4 DDR4-3200AA: tAA 13.75 ns = 22 nCK
        cwl: 16,          // JESD79-4 CWL for 3200, 1 tCK write preamble
        rcd: 22,          // JESD79-4 DDR4-3200AA: tRCD 13.75 ns
        rp: 22,           // JESD79-4 DDR4-3200AA: tRP 13.75 ns
        ras: 52,          // JESD79-4: tRAS(min) 32 ns → 51.2 → 52 nCK
        ccd_s: 4,         // JESD79-4: tCCD_S 4 nCK
        ccd_l: 8,         // JESD79-4 DDR4-3200: tCCD_L max(5 nCK, 5 ns) = 8 nCK
        rrd_s: 4,         // JESD79-4 DDR4-3200, 1 KB page: tRRD_S max(4 nCK, 2.5 ns) = 4 nCK
        rrd_l: 8,         // JESD79-4 DDR4-3200, 1 KB page: tRRD_L max(4 nCK, 4.9 ns) = 8 nCK
        faw: 34,          // JESD79-4 DDR4-3200, 1 KB page: tFAW max(20 nCK, 21 ns) = 34 nCK
        wr: 24,           // JESD79-4: tWR 15 ns = 24 nCK
        wtr_s: 4,         // JESD79-4: tWTR_S max(2 nCK, 2.5 ns) = 4 nCK
        wtr_l: 12,        // JESD79-4: tWTR_L max(4 nCK, 7.5 ns) = 12 nCK
        rtp: 12,          // JESD79-4: tRTP max(4 nCK, 7.5 ns) = 12 nCK
        rtrs: 1,          // not JEDEC: DRAMsim3's DDR4 tRTRS
        trfc: 350_000,    // JESD79-4, 8 Gb die: tRFC1 350 ns
        trefi: 7_800_000, // JESD79-4: tREFI 7.8 µs (0-85 °C)
        bank_groups: 4,   // 8 Gb x8 (MT40A1G8): 4 bank groups × 4 banks
        banks: 16,
        row_bytes: 8192, // 1 KB page × 8 x8 devices on a 64-bit channel
        channels: 1,
    },
    Preset {
        name: "DDR5-4800",
        speed_bin: "DDR5-4800B (JESD79-5)",
        rate_mts: 4800, // tCK 0.4167 ns
        channel_bits: 32,
        burst_length: 16, // BL16 on a 32-bit subchannel: 64 B in 8 nCK = 3.333 ns, 19.2 GB/s
        cl: 40,           // JESD79-5 DDR5-4800B: tAA 16.67 ns = 40 nCK
        cwl: 38,          // JESD79-5: CWL = CL - 2
        rcd: 39,          // JESD79-5 DDR5-4800B: tRCD 16.25 ns = 39 nCK
        rp: 39,           // JESD79-5 DDR5-4800B: tRP 16.25 ns = 39 nCK
        ras: 77,          // JESD79-5: tRAS(min) 32 ns → 76.8 → 77 nCK
        ccd_s: 8,         // JESD79-5: tCCD_S 8 nCK
        ccd_l: 12,        // JESD79-5 DDR5-4800: tCCD_L max(8 nCK, 5 ns) = 12 nCK
        rrd_s: 8,         // JESD79-5: tRRD_S 8 nCK
        rrd_l: 12,        // JESD79-5 DDR5-4800: tRRD_L max(8 nCK, 5 ns) = 12 nCK
        faw: 32,          // JESD79-5 DDR5-4800, x8 (1 KB page): tFAW max(32 nCK, 13.333 ns) = 32 nCK
        wr: 72,           // JESD79-5: tWR 30 ns = 72 nCK
        wtr_s: 6,         // JESD79-5: tWTR_S max(4 nCK, 2.5 ns) = 6 nCK
        wtr_l: 24,        // JESD79-5: tWTR_L max(16 nCK, 10 ns) = 24 nCK
        rtp: 18,          // JESD79-5: tRTP max(12 nCK, 7.5 ns) = 18 nCK
        rtrs: 2,          // not JEDEC: Ramulator 2's DDR5 nRTRS
        trfc: 295_000,    // JESD79-5, 16 Gb die: tRFC1 295 ns
        trefi: 3_900_000, // JESD79-5: tREFI 3.9 µs (normal refresh)
        bank_groups: 8,   // 16 Gb x8 (MT60B2G8): 8 bank groups × 4 banks
        banks: 32,
        row_bytes: 4096, // 1 KB page × 4 x8 devices on a 32-bit subchannel
        channels: 2,     // one DIMM's two subchannels: 38.4 GB/s
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
        let channel_queue = 32;
        DramParams {
            preset: self.name,
            channels: self.channels,
            ranks: 1,
            bank_groups: self.bank_groups,
            banks: self.banks,
            row_bytes: self.row_bytes,
            burst_bytes: self.channel_bits * self.burst_length / 8,
            page: Page::Open,
            mapping: Page::Open.default_mapping(),
            tck: self.ck(1),
            trcd: self.ck(self.rcd),
            tcl: self.ck(self.cl),
            tcwl: self.ck(self.cwl),
            trp: self.ck(self.rp),
            tras: self.ck(self.ras),
            tburst: self.ck(self.burst_length as u64 / 2),
            tccd_s: self.ck(self.ccd_s),
            tccd_l: self.ck(self.ccd_l),
            trrd_s: self.ck(self.rrd_s),
            trrd_l: self.ck(self.rrd_l),
            tfaw: self.ck(self.faw),
            twr: self.ck(self.wr),
            twtr_s: self.ck(self.wtr_s),
            twtr_l: self.ck(self.wtr_l),
            trtp: self.ck(self.rtp),
            trtrs: self.ck(self.rtrs),
            trfc: self.trfc,
            trefi: self.trefi,
            channel_queue,
            // A write queue as deep as the read queue, drained when full
            // (DRAMsim3's trigger) down to half (gem5's default low
            // watermark, 50 %): a drain to empty ends on a few writes whose
            // banks serialise them while every read waits.
            write_queue: channel_queue,
            write_high: channel_queue,
            write_low: channel_queue / 2,
            frontend: 1,
        }
    }
}

/// The parameters of one DRAM: a preset with any overrides applied.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DramParams {
    pub preset: &'static str,
    pub channels: u32,
    pub ranks: u32,
    /// Bank groups per rank; bank b of a rank is in group b % bank_groups
    /// (the low bits of the bank field select the group).
    pub bank_groups: u32,
    /// Banks per rank (all groups).
    pub banks: u32,
    /// Row buffer of one rank on one channel, bytes.
    pub row_bytes: u32,
    /// Bytes one burst moves (the column granule; 64 B for every preset).
    pub burst_bytes: u32,
    pub page: Page,
    /// Address fields, most significant first.
    pub mapping: [Field; 5],
    /// Clock period: the command bus carries one command per tCK.
    pub tck: Time,
    /// ACT to column command.
    pub trcd: Time,
    /// Read command to first data (CAS latency, tAA).
    pub tcl: Time,
    /// Write command to first data (CAS write latency).
    pub tcwl: Time,
    /// PRE to ACT.
    pub trp: Time,
    /// ACT to PRE, minimum.
    pub tras: Time,
    /// One burst on the data bus (BL / 2 clocks).
    pub tburst: Time,
    /// Column command to column command, different / same bank group.
    pub tccd_s: Time,
    pub tccd_l: Time,
    /// ACT to ACT in one rank, different / same bank group.
    pub trrd_s: Time,
    pub trrd_l: Time,
    /// At most four ACTs of one rank in any tFAW.
    pub tfaw: Time,
    /// Write recovery: the end of write data to PRE.
    pub twr: Time,
    /// The end of write data to a read command, different / same bank group.
    pub twtr_s: Time,
    pub twtr_l: Time,
    /// Read command to PRE.
    pub trtp: Time,
    /// Data-bus turnaround between ranks, and between a read and a write.
    pub trtrs: Time,
    /// Refresh cycle: all banks of a rank blocked this long...
    pub trfc: Time,
    /// ...every tREFI (0: no refresh).
    pub trefi: Time,
    /// Reads a channel's scheduler holds; more wait (back-pressure).
    pub channel_queue: u32,
    /// Writes a channel's write queue holds; more wait (back-pressure).
    pub write_queue: u32,
    /// Writes queued at which the channel starts draining them (reads wait).
    pub write_high: u32,
    /// Writes queued at which a drain stops.
    pub write_low: u32,
    /// Controller clocks (tCK) between a request's arrival and the first
    /// command it may issue: the clock on which the controller latches the
    /// request into its queue, before its scheduler can pick it on the
    /// next. Pipeline latency beyond the scheduler (gem5's 10 ns static
    /// front- and back-end latencies, added to the response) is the
    /// endpoint's `latency`.
    pub frontend: u32,
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
        at_least_1("bank_groups", self.bank_groups)?;
        at_least_1("banks", self.banks)?;
        at_least_1("channel_queue", self.channel_queue)?;
        at_least_1("write_queue", self.write_queue)?;
        at_least_1("write_high", self.write_high)?;
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
        if !self.banks.is_multiple_of(self.bank_groups) {
            return Err((
                "banks",
                format!(
                    "{}: expected a multiple of bank_groups ({}), the same number of banks in each group",
                    self.banks, self.bank_groups
                ),
            ));
        }
        if self.row_bytes < self.burst_bytes || !self.row_bytes.is_multiple_of(self.burst_bytes) {
            return Err((
                "row_size",
                format!("{}B: expected a multiple of the {}-byte burst", self.row_bytes, self.burst_bytes),
            ));
        }
        let positive = |key: &'static str, v: Time| {
            if v == 0 {
                Err((key, "0ns: expected a positive time".to_string()))
            } else {
                Ok(())
            }
        };
        positive("tburst", self.tburst)?;
        positive("tck", self.tck)?;
        let pair = |short: &'static str, s: Time, long: &'static str, l: Time| {
            if l < s {
                Err((long, format!("{long} {} < {short} {}: expected {long} >= {short}", Duration(l), Duration(s))))
            } else {
                Ok(())
            }
        };
        pair("tccd_s", self.tccd_s, "tccd_l", self.tccd_l)?;
        pair("trrd_s", self.trrd_s, "trrd_l", self.trrd_l)?;
        pair("twtr_s", self.twtr_s, "twtr_l", self.twtr_l)?;
        if self.write_high > self.write_queue {
            return Err((
                "write_high",
                format!("{}: expected at most write_queue ({})", self.write_high, self.write_queue),
            ));
        }
        if self.write_low >= self.write_high {
            return Err((
                "write_low",
                format!("{}: expected less than write_high ({})", self.write_low, self.write_high),
            ));
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

    /// The front end's time: `frontend` clocks.
    pub fn tfrontend(&self) -> Time {
        self.frontend as Time * self.tck
    }

    /// Idle read to a closed bank: the front end, ACT, column command,
    /// first data, burst.
    pub fn idle_read(&self) -> Time {
        self.tfrontend() + self.trcd + self.tcl + self.tburst
    }

    fn lines_per_row(&self) -> u64 {
        (self.row_bytes / self.burst_bytes) as u64
    }

    /// The bank group of bank `bank` (of a rank).
    pub fn group_of(&self, bank: u32) -> u32 {
        bank % self.bank_groups
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
    /// Earliest PRE (ACT + tRAS, read + tRTP, write data + tWR).
    pre_ready: Time,
    /// Queued reads and writes to the open row (none while it is closed).
    hits_r: u32,
    hits_w: u32,
    /// Stamp of the pass that met the bank's oldest request.
    seen: u32,
}

impl Bank {
    /// Precharged: no row open, so no queued request hits.
    #[inline]
    fn close(&mut self) {
        self.row = NO_ROW;
        self.hits_r = 0;
        self.hits_w = 0;
    }
}

/// Timing state shared by the banks of a rank, or of a bank group.
#[derive(Debug, Clone, Copy, Default)]
struct Shared {
    /// Earliest ACT (tRRD_S for a rank, tRRD_L for a group).
    act: Time,
    /// Earliest read command (tCCD, tWTR).
    rd: Time,
    /// Earliest write command (tCCD).
    wr: Time,
}

#[derive(Debug, Clone, Copy)]
struct Entry {
    id: u32,
    rank: u32,
    /// Bank group in the rank.
    group: u32,
    /// Flat bank index: rank × banks + bank.
    bank: u32,
    row: u64,
    /// Past the front end: its first command may issue (arrival + frontend clocks).
    ready: Time,
    bursts: u32,
    /// Time of the PRE / ACT issued for this request (excluded from its queueing delay).
    prep: Time,
    pre: bool,
    act: bool,
}

struct Channel {
    banks: Vec<Bank>,
    /// Per rank.
    ranks: Vec<Shared>,
    /// Per rank × bank group.
    groups: Vec<Shared>,
    /// Per rank: its last four ACTs (a ring), each as the time its tFAW
    /// window ends (0: none yet).
    faw: Vec<[Time; 4]>,
    faw_at: Vec<u8>,
    /// Reads and writes in arrival order (oldest first).
    reads: Vec<Entry>,
    writes: Vec<Entry>,
    /// Draining writes (from the high watermark down to the low one).
    draining: bool,
    /// When the drain began: reads past the front end by then had been
    /// handed to their banks and keep issuing during the drain.
    drain_start: Time,
    /// When the front end has handed the drain's writes to their banks:
    /// reads that arrived during the drain are handed after them.
    hand_end: Time,
    /// The command bus is free again (one command per tCK).
    cmd_free: Time,
    /// The data bus is free again, after a burst of `bus_rank`, a write if `bus_write`.
    bus_free: Time,
    bus_rank: u32,
    bus_write: bool,
    next_refresh: Vec<Time>,
    wake_at: Option<Time>,
    /// The scheduling pass (stamps `Bank::hit` and `Bank::seen`).
    epoch: u32,
}

/// A column command the step issued.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Issued {
    /// The caller's id of the request.
    pub id: u32,
    /// When its last data beat leaves the DRAM (a read) or is written (a write).
    pub done: Time,
    /// Time it waited in the queue beyond the front end and its own
    /// PRE/ACT (for the buses, other requests' banks, a write drain,
    /// refresh).
    pub queued: Time,
}

/// What a step did and when the channel next needs a step.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Step {
    pub issued: Option<Issued>,
    /// The earliest time a command may become legal (None: queues empty).
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

/// What a pass over the active queues chose: the column command, or the
/// PRE or ACT, of request i of the write queue (`true`) or the read queue.
#[derive(Clone, Copy)]
enum Cmd {
    Column(bool, usize),
    Row(bool, usize),
}

/// Which requests a step considers.
#[derive(Clone, Copy)]
enum Mode {
    /// The reads.
    Read,
    /// The writes (no read waits).
    Write,
    /// A drain that began at `start`: the reads handed to their banks
    /// before it (past the front end by `start`), then the writes, then the
    /// reads that arrived since, handed once the front end has handed the
    /// drain's writes (at `handed`).
    Drain { start: Time, handed: Time },
}

/// One run of a step's participants: the reads or the writes, those with
/// `ready` in [`from`, `upto`], each issuing no earlier than `handed`.
#[derive(Clone, Copy)]
struct Segment {
    write: bool,
    from: Time,
    upto: Time,
    handed: Time,
}

impl Segment {
    const fn all(write: bool) -> Self {
        Segment { write, from: 0, upto: Time::MAX, handed: 0 }
    }

    /// Whether `q` takes part in this run, and the earliest time it may issue a command.
    #[inline(always)]
    fn ready(&self, q: &Entry) -> Option<Time> {
        (self.from <= q.ready && q.ready <= self.upto).then(|| q.ready.max(self.handed))
    }
}

/// The requests taking part in a step, in FR-FCFS order, as runs over the
/// two queues (plain loops: a chain of filtered iterators walked the
/// queues the mode leaves out, element by element).
fn segments(mode: Mode) -> impl Iterator<Item = Segment> {
    let (runs, n) = match mode {
        Mode::Read => ([Segment::all(false); 3], 1),
        Mode::Write => ([Segment::all(true); 3], 1),
        Mode::Drain { start, handed } => (
            [
                Segment { write: false, from: 0, upto: start, handed: 0 },
                Segment::all(true),
                Segment { write: false, from: start.saturating_add(1), upto: Time::MAX, handed },
            ],
            3,
        ),
    };
    runs.into_iter().take(n)
}

impl Dram {
    /// A DRAM with every bank precharged. `params` must be valid.
    pub fn new(params: DramParams) -> Self {
        let nb = (params.ranks * params.banks) as usize;
        let nr = params.ranks as usize;
        let bank = Bank { row: NO_ROW, act_ready: 0, col_ready: 0, pre_ready: 0, hits_r: 0, hits_w: 0, seen: 0 };
        let channels = (0..params.channels)
            .map(|_| Channel {
                banks: vec![bank; nb],
                ranks: vec![Shared::default(); nr],
                groups: vec![Shared::default(); nr * params.bank_groups as usize],
                // No ACT yet: the window is open.
                faw: vec![[0; 4]; nr],
                faw_at: vec![0; nr],
                reads: Vec::with_capacity(params.channel_queue as usize),
                writes: Vec::with_capacity(params.write_queue as usize),
                draining: false,
                drain_start: 0,
                hand_end: 0,
                cmd_free: 0,
                bus_free: 0,
                bus_rank: 0,
                bus_write: false,
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

    /// Whether channel `ch`'s read queue (`write`: its write queue) has room
    /// for one more request.
    pub fn has_room(&self, ch: u32, write: bool) -> bool {
        let c = &self.channels[ch as usize];
        if write {
            c.writes.len() < self.params.write_queue as usize
        } else {
            c.reads.len() < self.params.channel_queue as usize
        }
    }

    /// Requests (reads and writes) queued on channel `ch`.
    pub fn queued(&self, ch: u32) -> usize {
        let c = &self.channels[ch as usize];
        c.reads.len() + c.writes.len()
    }

    /// Whether channel `ch` is draining its writes.
    pub fn draining(&self, ch: u32) -> bool {
        self.channels[ch as usize].draining
    }

    /// Queue a read (`write`: a write) of `bytes` at `addr`, known to the
    /// caller as `id`; returns its channel, which the caller must then
    /// `step` at `now`. Panics if the queue is full (check `has_room`).
    pub fn enqueue(&mut self, now: Time, id: u32, addr: u64, bytes: u32, write: bool) -> u32 {
        let loc = self.locate(addr);
        let p = &self.params;
        let bursts = bytes.div_ceil(p.burst_bytes).max(1);
        let bank = loc.rank * p.banks + loc.bank;
        let group = p.group_of(loc.bank);
        let c = &mut self.channels[loc.channel as usize];
        let e = Entry {
            id,
            rank: loc.rank,
            group,
            bank,
            row: loc.row,
            ready: now + p.tfrontend(),
            bursts,
            prep: 0,
            pre: false,
            act: false,
        };
        let b = &mut c.banks[bank as usize];
        if write {
            assert!(c.writes.len() < p.write_queue as usize, "DRAM channel {} write queue is full", loc.channel);
            c.writes.push(e);
            b.hits_w += (b.row == loc.row) as u32;
        } else {
            assert!(c.reads.len() < p.channel_queue as usize, "DRAM channel {} queue is full", loc.channel);
            c.reads.push(e);
            b.hits_r += (b.row == loc.row) as u32;
        }
        loc.channel
    }

    /// Step channel `ch` at `now` (as [`Dram::step`]) and claim its next
    /// step: returns the column command issued, and the time at which the
    /// caller must schedule a step of `ch` — None when the queues are empty
    /// or an earlier step is already pending.
    pub fn advance(&mut self, now: Time, ch: u32) -> (Option<Issued>, Option<Time>) {
        let s = self.step_with(now, ch, true);
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
    /// rank's open banks precharge (not before tRAS, tRTP, tWR), then REF
    /// blocks all its banks for tRFC. Commands issue only in steps, and a
    /// step applies due refreshes first, so applying them late changes
    /// nothing.
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
                    b.close();
                    b.act_ready = start + p.trfc;
                }
                c.next_refresh[r] = t + p.trefi;
                self.stats.refreshes += 1;
            }
        }
    }

    /// The kept hit counts agree with the queues (debug builds).
    #[cfg(debug_assertions)]
    fn check_hits(c: &Channel) {
        for (bi, b) in c.banks.iter().enumerate() {
            let hits = |v: &[Entry]| v.iter().filter(|x| x.bank as usize == bi && x.row == b.row).count() as u32;
            assert_eq!((b.hits_r, b.hits_w), (hits(&c.reads), hits(&c.writes)), "hit counts of bank {bi}");
        }
    }

    /// A new pass over a channel's queue: no bank stamped yet.
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

    /// The earliest time the column command of `q` (to its bank's open
    /// row) is legal: tRCD, tCCD_S/L, tWTR_S/L, the data bus (with tRTRS
    /// on a change of rank or direction) and the command bus.
    #[inline]
    fn column_time(p: &DramParams, c: &Channel, q: &Entry, write: bool, ready: Time) -> Time {
        let b = &c.banks[q.bank as usize];
        let r = &c.ranks[q.rank as usize];
        let g = &c.groups[(q.rank * p.bank_groups + q.group) as usize];
        let (own, latency) = if write { (r.wr.max(g.wr), p.tcwl) } else { (r.rd.max(g.rd), p.tcl) };
        let turn = if c.bus_rank != q.rank || c.bus_write != write { p.trtrs } else { 0 };
        let bus = (c.bus_free + turn).saturating_sub(latency);
        b.col_ready.max(own).max(bus).max(c.cmd_free).max(ready)
    }

    /// The earliest time of the row command `q` needs: a PRE if its bank
    /// has another row open, else an ACT (tRP, refresh, tRRD_S/L, tFAW).
    #[inline]
    fn row_time(p: &DramParams, c: &Channel, q: &Entry, ready: Time) -> Time {
        let b = &c.banks[q.bank as usize];
        let t = if b.row != NO_ROW {
            b.pre_ready
        } else {
            let r = q.rank as usize;
            let g = &c.groups[(q.rank * p.bank_groups + q.group) as usize];
            // The fourth ACT back in this rank, plus tFAW.
            let faw = c.faw[r][c.faw_at[r] as usize];
            b.act_ready.max(c.ranks[r].act).max(g.act).max(faw)
        };
        t.max(c.cmd_free).max(ready)
    }

    /// Issue the command on channel `ch` that FR-FCFS chooses at `now`, if
    /// one is legal. The requests taking part: the reads, unless the
    /// channel writes (it drains, or no read waits); then the writes, and
    /// during a drain also the reads that were past the front end when the
    /// drain began (handed to their banks' command queues, which a drain
    /// does not empty), ahead of the writes. Of these, in that order, the
    /// oldest whose column command is legal (a row hit), else the oldest
    /// PRE or ACT that is legal, for the oldest request of a bank that no
    /// request taking part hits (a bank with a queued hit stays open). No
    /// command before a request's front end has passed. One command per
    /// step (the command bus carries one per tCK). Returns the column
    /// command issued, if any, and when the channel next needs a step.
    pub fn step(&mut self, now: Time, ch: u32) -> Step {
        self.step_with(now, ch, false)
    }

    /// [`Dram::step`]; `claimed`: for [`Dram::advance`], which schedules
    /// only a step earlier than the pending one.
    #[inline]
    fn step_with(&mut self, now: Time, ch: u32, claimed: bool) -> Step {
        let chi = ch as usize;
        self.refresh(chi, now);
        let p = &self.params;
        let c = &mut self.channels[chi];
        // Read or write mode: drain writes from the high watermark down to
        // the low one; serve writes when no read waits.
        let nw = c.writes.len();
        if c.draining && nw <= p.write_low as usize {
            c.draining = false;
        }
        if !c.draining && nw >= p.write_high as usize {
            c.draining = true;
            c.drain_start = now;
            // The front end hands the drain's writes to their banks, one a clock.
            c.hand_end = now + (nw - p.write_low as usize) as Time * p.tck;
        }
        let Some(mode) = Self::mode(c) else {
            return Step { issued: None, next: None };
        };
        // Before the command bus is free nothing is legal and nothing
        // becomes legal before it is: a pending step at or before then
        // makes the pass useless (it would find nothing and ask for no
        // earlier step). Arrivals just after a command meet this.
        if claimed && now < c.cmd_free && c.wake_at.is_some_and(|w| w <= c.cmd_free) {
            return Step { issued: None, next: None };
        }
        let (choice, next) = Self::scan(p, c, now, mode);
        let issued = match choice {
            Some(Cmd::Column(w, i)) => Some(self.column(chi, i, w, now)),
            Some(Cmd::Row(w, i)) => {
                self.row_command(chi, i, w, now);
                None
            }
            None => None,
        };
        let c = &self.channels[chi];
        let next = if choice.is_some() {
            // Something changed: look again when the command bus is free.
            (c.reads.len() + c.writes.len() > 0).then_some(c.cmd_free)
        } else {
            (next != Time::MAX).then(|| next.max(now + 1))
        };
        Step { issued, next }
    }

    /// Which requests take part in a step (None: both queues are empty).
    #[inline]
    fn mode(c: &Channel) -> Option<Mode> {
        let write = c.draining || (c.reads.is_empty() && !c.writes.is_empty());
        if !write && c.reads.is_empty() {
            None
        } else if !write {
            Some(Mode::Read)
        } else if c.draining {
            Some(Mode::Drain { start: c.drain_start, handed: c.hand_end })
        } else {
            Some(Mode::Write)
        }
    }

    /// One FR-FCFS pass at `now`: the command to issue, if one is legal,
    /// and the earliest time one becomes legal (Time::MAX: none; not
    /// complete when a column command is chosen).
    fn scan(p: &DramParams, c: &mut Channel, now: Time, mode: Mode) -> (Option<Cmd>, Time) {
        #[cfg(debug_assertions)]
        Self::check_hits(c);
        let e = Self::new_pass(c);
        // A bank with a queued hit among the participants stays open: the
        // hits per bank are kept as counts (reads, writes), so one pass
        // suffices.
        let with_writes = !matches!(mode, Mode::Read);
        let mut row_choice: Option<Cmd> = None;
        let mut next = Time::MAX;
        for seg in segments(mode) {
            let n = if seg.write { c.writes.len() } else { c.reads.len() };
            // every request of the queue, as it is (no drain's bounds)
            let whole = seg.from == 0 && seg.upto == Time::MAX && seg.handed == 0;
            for i in 0..n {
                let q = if seg.write { &c.writes[i] } else { &c.reads[i] };
                let ready = if whole {
                    q.ready
                } else {
                    let Some(r) = seg.ready(q) else { continue };
                    r
                };
                let bi = q.bank as usize;
                let b = &c.banks[bi];
                if b.row == q.row {
                    let t = Self::column_time(p, c, q, seg.write, ready);
                    if t <= now {
                        // A column command wins, and once one issues the
                        // next step is at the free command bus: the rest
                        // of the pass would change nothing.
                        return (Some(Cmd::Column(seg.write, i)), next);
                    }
                    next = next.min(t);
                } else if b.seen != e && !(b.hits_r > 0 || (with_writes && b.hits_w > 0)) {
                    let t = Self::row_time(p, c, q, ready);
                    if t <= now && row_choice.is_none() {
                        row_choice = Some(Cmd::Row(seg.write, i));
                    }
                    next = next.min(t);
                }
                c.banks[bi].seen = e;
            }
        }
        (row_choice, next)
    }

    /// Issue the PRE or ACT that request `i` of the write (`write`) or read queue needs.
    fn row_command(&mut self, ch: usize, i: usize, write: bool, now: Time) {
        let p = &self.params;
        let c = &mut self.channels[ch];
        let (bank, row) = if write { (c.writes[i].bank, c.writes[i].row) } else { (c.reads[i].bank, c.reads[i].row) };
        // An ACT: the requests (this one among them) that will hit.
        let hits = |v: &[Entry]| v.iter().filter(|x| x.bank == bank && x.row == row).count() as u32;
        let opens = c.banks[bank as usize].row == NO_ROW;
        let (hits_r, hits_w) = if opens { (hits(&c.reads), hits(&c.writes)) } else { (0, 0) };
        let q = if write { &mut c.writes[i] } else { &mut c.reads[i] };
        let b = &mut c.banks[bank as usize];
        if !opens {
            b.close();
            b.act_ready = b.act_ready.max(now + p.trp);
            q.pre = true;
            q.prep += p.trp;
            self.stats.precharges += 1;
        } else {
            b.row = row;
            b.hits_r = hits_r;
            b.hits_w = hits_w;
            b.col_ready = now + p.trcd;
            b.pre_ready = now + p.tras;
            q.act = true;
            q.prep += p.trcd;
            let r = q.rank as usize;
            c.ranks[r].act = now + p.trrd_s;
            c.groups[(q.rank * p.bank_groups + q.group) as usize].act = now + p.trrd_l;
            let k = c.faw_at[r] as usize;
            c.faw[r][k] = now + p.tfaw;
            c.faw_at[r] = ((k + 1) % 4) as u8;
            self.stats.activates += 1;
        }
        c.cmd_free = now + p.tck;
    }

    /// Issue the column command of request `i` of the write (`write`) or read queue.
    fn column(&mut self, ch: usize, i: usize, write: bool, now: Time) -> Issued {
        let p = &self.params;
        let c = &mut self.channels[ch];
        let q = if write { c.writes.remove(i) } else { c.reads.remove(i) };
        let burst_time = q.bursts as Time * p.tburst;
        // The request's later bursts follow at one per tBURST.
        let last = now + burst_time - p.tburst;
        let latency = if write { p.tcwl } else { p.tcl };
        let done = now + latency + burst_time;
        let r = &mut c.ranks[q.rank as usize];
        r.rd = r.rd.max(last + p.tccd_s);
        r.wr = r.wr.max(last + p.tccd_s);
        let g = &mut c.groups[(q.rank * p.bank_groups + q.group) as usize];
        g.rd = g.rd.max(last + p.tccd_l);
        g.wr = g.wr.max(last + p.tccd_l);
        let b = &mut c.banks[q.bank as usize];
        // it hit the open row
        if write {
            b.hits_w -= 1;
        } else {
            b.hits_r -= 1;
        }
        if write {
            // Write to read: tWTR after the write data, in this rank.
            let r = &mut c.ranks[q.rank as usize];
            r.rd = r.rd.max(done + p.twtr_s);
            let g = &mut c.groups[(q.rank * p.bank_groups + q.group) as usize];
            g.rd = g.rd.max(done + p.twtr_l);
            b.pre_ready = b.pre_ready.max(done + p.twr);
        } else {
            b.pre_ready = b.pre_ready.max(last + p.trtp);
        }
        if p.page == Page::Closed {
            // Auto-precharge after the last column command, when tRAS, tRTP or tWR allow.
            b.close();
            b.act_ready = b.pre_ready + p.trp;
            self.stats.precharges += 1;
        }
        c.bus_free = done;
        c.bus_rank = q.rank;
        c.bus_write = write;
        c.cmd_free = now + p.tck;
        let s = &mut self.stats;
        s.accesses += 1;
        s.bus_busy_ps += burst_time;
        match (q.pre, q.act) {
            (_, false) => s.row_hits += 1,
            (false, true) => s.row_empty += 1,
            (true, true) => s.row_conflicts += 1,
        }
        Issued { id: q.id, done, queued: now.saturating_sub(q.ready).saturating_sub(q.prep) }
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
        // The bank-group, activate-window and write timings, in ps.
        assert_eq!(
            (d4.tcwl, d4.tccd_s, d4.tccd_l, d4.trrd_s, d4.trrd_l, d4.tfaw, d4.twr, d4.twtr_s, d4.twtr_l, d4.trtp),
            (10_000, 2_500, 5_000, 2_500, 5_000, 21_250, 15_000, 2_500, 7_500, 7_500)
        );
        assert_eq!((d4.bank_groups, d4.banks, d4.tck, d4.trtrs), (4, 16, 625, 625));
        let d24 = Preset::find("DDR4-2400").unwrap().params();
        assert_eq!((d24.tcl, d24.trcd, d24.trp, d24.tras, d24.tburst), (14_167, 14_167, 14_167, 32_500, 3_333));
        assert_eq!((d24.tccd_l, d24.tfaw, d24.twtr_l), (5_000, 21_667, 7_500));
        assert_eq!(
            (d5.tcwl, d5.tccd_s, d5.tccd_l, d5.trrd_l, d5.tfaw, d5.twr, d5.twtr_s, d5.twtr_l, d5.trtp),
            (15_833, 3_333, 5_000, 5_000, 13_333, 30_000, 2_500, 10_000, 7_500)
        );
        assert_eq!((d5.bank_groups, d5.banks), (8, 32));
        for p in &PRESETS {
            p.params().validate().unwrap();
        }
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

    /// The step as it was before the hit counts and the one-pass scan
    /// (two passes over the participants, the first stamping the banks
    /// with a queued hit): the reference the step must match.
    fn reference_step(d: &mut Dram, now: Time, ch: u32) -> Step {
        let chi = ch as usize;
        d.refresh(chi, now);
        let p = &d.params;
        let c = &mut d.channels[chi];
        let nw = c.writes.len();
        if c.draining && nw <= p.write_low as usize {
            c.draining = false;
        }
        if !c.draining && nw >= p.write_high as usize {
            c.draining = true;
            c.drain_start = now;
            c.hand_end = now + (nw - p.write_low as usize) as Time * p.tck;
        }
        let Some(mode) = Dram::mode(c) else { return Step { issued: None, next: None } };
        let (before, with_writes, after) = match mode {
            Mode::Read => (Time::MAX, false, None),
            Mode::Write => (0, true, None),
            Mode::Drain { start, handed } => (start, true, Some(handed)),
        };
        let mut parts: Vec<(bool, usize, Entry, Time)> = Vec::new();
        parts.extend(
            c.reads.iter().enumerate().filter(|(_, q)| q.ready <= before).map(|(i, q)| (false, i, *q, q.ready)),
        );
        if with_writes {
            parts.extend(c.writes.iter().enumerate().map(|(i, q)| (true, i, *q, q.ready)));
        }
        if let Some(h) = after {
            parts.extend(
                c.reads
                    .iter()
                    .enumerate()
                    .filter(|(_, q)| q.ready > before)
                    .map(|(i, q)| (false, i, *q, q.ready.max(h))),
            );
        }
        let mut hit = vec![false; c.banks.len()];
        let mut seen = vec![false; c.banks.len()];
        for (_, _, q, _) in &parts {
            if c.banks[q.bank as usize].row == q.row {
                hit[q.bank as usize] = true;
            }
        }
        let (mut choice, mut row_choice, mut next) = (None, None, Time::MAX);
        for &(w, i, q, ready) in &parts {
            let bi = q.bank as usize;
            if c.banks[bi].row == q.row {
                let t = Dram::column_time(p, c, &q, w, ready);
                if t <= now && choice.is_none() {
                    choice = Some(Cmd::Column(w, i));
                }
                next = next.min(t);
            } else if !seen[bi] && !hit[bi] {
                let t = Dram::row_time(p, c, &q, ready);
                if t <= now && row_choice.is_none() {
                    row_choice = Some(Cmd::Row(w, i));
                }
                next = next.min(t);
            }
            seen[bi] = true;
        }
        let choice = choice.or(row_choice);
        let issued = match choice {
            Some(Cmd::Column(w, i)) => Some(d.column(chi, i, w, now)),
            Some(Cmd::Row(w, i)) => {
                d.row_command(chi, i, w, now);
                None
            }
            None => None,
        };
        let c = &d.channels[chi];
        let next = if choice.is_some() {
            (c.reads.len() + c.writes.len() > 0).then_some(c.cmd_free)
        } else {
            (next != Time::MAX).then(|| next.max(now + 1))
        };
        Step { issued, next }
    }

    /// Random arrivals (reads and writes, a few rows per bank so that hits,
    /// conflicts and drains all occur) on two DRAMs, one stepped by
    /// `Dram::step`, one by the reference: every step must agree.
    #[test]
    fn one_pass_step_matches_the_two_pass_reference() {
        use crate::engine::rng::Stream;
        let mut cases = Vec::new();
        for (page, queue, trefi) in [(Page::Open, 8, 0), (Page::Open, 32, 200_000), (Page::Closed, 16, 0)] {
            let mut p = Preset::find("DDR5-4800").unwrap().params();
            p.page = page;
            p.mapping = page.default_mapping();
            p.channel_queue = queue;
            p.write_queue = queue;
            p.write_high = queue;
            p.write_low = queue / 2;
            if trefi > 0 {
                p.trefi = trefi;
                p.trfc = trefi / 4;
            }
            cases.push(p);
        }
        for (k, p) in cases.into_iter().enumerate() {
            let (mut a, mut b) = (Dram::new(p.clone()), Dram::new(p.clone()));
            let mut rng = Stream::new(7 + k as u64, 0);
            let channels = p.channels as usize;
            let mut wake = vec![Time::MAX; channels];
            let (mut arrival, mut steps, mut issued) = (0, 0u64, 0u64);
            let row_span = p.row_bytes as u64 * p.channels as u64 * p.banks as u64;
            while issued < 4000 {
                let (w, ch) = wake.iter().enumerate().map(|(c, &t)| (t, c)).min().unwrap();
                let now;
                let stepped = if arrival <= w {
                    now = arrival;
                    arrival = now + rng.below(6000);
                    // one of four rows per bank, any column and channel
                    let addr = rng.below(4) * row_span + rng.below(row_span) / 64 * 64;
                    let write = rng.below(10) < 4;
                    let ch = a.channel_of(addr);
                    if !a.has_room(ch, write) {
                        continue;
                    }
                    assert_eq!(a.enqueue(now, 0, addr, 64, write), b.enqueue(now, 0, addr, 64, write));
                    ch as usize
                } else {
                    now = w;
                    ch
                };
                let (sa, sb) = (a.step(now, stepped as u32), reference_step(&mut b, now, stepped as u32));
                assert_eq!(sa, sb, "case {k}, step {steps} at {now} on channel {stepped}");
                steps += 1;
                issued += sa.issued.is_some() as u64;
                wake[stepped] = sa.next.unwrap_or(Time::MAX);
            }
            assert_eq!(a.stats, b.stats);
            assert!(a.stats.row_hits > 0 && a.stats.row_conflicts > 0, "case {k}: {:?}", a.stats);
            if p.trefi < 1_000_000 {
                assert!(a.stats.refreshes > 0);
            }
        }
    }
}
