//! `[protocol.bi]`: the BI machine's keys, and their resolution on a machine.

use serde::{Deserialize, Serialize};

use super::family::BiSpec;
use crate::agents::family::{Machine, ParamError};
use crate::engine::units::{Duration, Size};

/// `[protocol.bi]`: the Bounded Incoherence machine (seed 001). Requesters
/// are cores, domain-major (the same number per domain); memories are the
/// domains' LLCs, then the global memories. Every time and size defaults
/// to the calibrated Skylake-SP value in `agents::bi::Params` (sources in
/// docs/config.md and docs/design/bi.md §4).
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, Default, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BiConfig {
    /// Coherence domains (sockets); default 1.
    pub domains: Option<u32>,
    /// Private L1 (tags: its hit time), private L2 (MESI state), shared L3 per domain.
    pub l1_size: Option<Size>,
    /// The L1's ways (default 8).
    pub l1_ways: Option<u32>,
    /// Each core's private L2, which holds the line's MESI state (default 1 MiB).
    pub l2_size: Option<Size>,
    /// The L2's ways (default 16).
    pub l2_ways: Option<u32>,
    /// Each domain's inclusive L3 and its directory (default 38.5 MiB).
    pub l3_size: Option<Size>,
    /// The L3's ways (default 11).
    pub l3_ways: Option<u32>,
    /// Victim policy of the three caches (default `lru`).
    pub policy: Option<String>,
    /// A load that hits the L1, in all (default: the `skylake-sp` preset's 4 cycles).
    pub l1_latency: Option<Duration>,
    /// A load that hits the L2, in all (default: the preset's 14 cycles).
    pub l2_latency: Option<Duration>,
    /// A load that hits the domain's L3, in all (default 22 ns).
    pub l3_latency: Option<Duration>,
    /// A load from the domain's own memory (remote premiums are the links').
    pub memory_latency: Option<Duration>,
    /// A memory accepting a written-back line (to its ack).
    pub memory_write: Option<Duration>,
    /// A memory's time per line written back, one at a time.
    pub writeback_service: Option<Duration>,
    /// A clflushopt's or clwb's issue, each (default 1 ns).
    pub flush_issue: Option<Duration>,
    /// Each core's L1 fill buffers (default: the `skylake-sp` preset's 12):
    /// every miss in flight holds one, a load's, an ownership request's
    /// (a store's, an exchange's) and a clflush/clflushopt/clwb's alike.
    /// One value for every figure; another is a declared alternative
    /// (BI Fig 12's 10, the count the sources give for earlier cores).
    pub fill_buffers: Option<u32>,
    /// Extra cost of a flush of a line the domain does not hold.
    pub broadcast: Option<Duration>,
    /// An mfence's own cost once the flushes in flight are done (default 13.2 ns).
    pub fence: Option<Duration>,
    /// clwb also invalidates the line, as clflushopt does (default false).
    pub clwb_invalidates: Option<bool>,
    /// A flush of a line the domain does not hold is broadcast to its cores
    /// and costs `broadcast` more (default true).
    pub broadcast_on_miss: Option<bool>,
    /// Lines interleave over the global memories in ranges of this size (default 1 GiB).
    pub interleave: Option<Size>,
    /// A deliberately broken machine (reproduction tests).
    pub mutant: Option<String>,
    /// Coherent across domains: each LLC's directory is a client of a home
    /// directory at the line's global memory (default false).
    pub coherent: Option<bool>,
    /// A micro-benchmark run by domain 0's first core instead of a workload.
    pub bench: Option<BiBenchConfig>,
    /// BI Table 1's tree benchmark on every core, through the BI runtime.
    pub tree: Option<BiTreeConfig>,
}

/// `[protocol.bi.tree]`: a BONSAI red-black tree in global memory; core 0
/// is the delegate that applies every update, the other cores look keys
/// up through the BI runtime and send their updates to it (BI Table 1).
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, Default, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BiTreeConfig {
    /// Tree nodes (the working set); the keys are drawn from twice as many.
    pub nodes: Option<u64>,
    /// Share of operations that are updates, 0 to 1 (half inserts, half deletes).
    pub updates: Option<f64>,
    /// Operations are measured from `warmup` to `time`, when the threads stop.
    pub warmup: Option<Duration>,
    pub time: Option<Duration>,
    /// Each thread's periodic cache quiescence (`reader_engine`) period.
    pub period: Option<Duration>,
    /// §5.2's optimisation: timing records written back by the engine only
    /// (false: `bi_enter`/`bi_exit` write back at once, Table 1A's non-opt).
    pub deferred_writeback: Option<bool>,
    /// Records per log buffer (the freed and modified logs).
    pub log_cap: Option<u32>,
    /// The skew margin D.
    pub skew_margin: Option<Duration>,
    /// Entries of each core's store buffer. Default: the `skylake-sp`
    /// preset's 56, held by the core's front end (`agents/bi/front.rs`),
    /// which stalls dispatch when they are all taken. A declared
    /// alternative only: 0, an in-order core whose stores wait for their
    /// lines (BI Table 1's departure, its Choice), or another size (tests).
    pub store_buffer: Option<u32>,
    /// `bi` (default: the BI runtime, updates delegated to core 0) or
    /// `urcu` (U-RCU on the coherent machine: every core updates under a lock).
    pub front_end: Option<String>,
    /// A deliberately broken BI runtime (reproduction tests):
    /// `no-period-subtraction`, `no-free-mark-check` or `enter-before-exit`.
    pub mutant: Option<String>,
}

/// `[protocol.bi.bench]`: the micro-benchmarks of the paper's Figs 3, 11 and 12.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, Default, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BiBenchConfig {
    /// `read` (loads over a working set, each optionally after a clflush),
    /// `flush` (an operation on lines left in a state, then mfence) or
    /// `periodic` (random loads under periodic invalidation, Fig 12).
    pub kind: String,
    /// read: the working set; loads; a clflush before each; in order (else
    /// random); start with the caches warm.
    pub working_set: Option<Size>,
    pub ops: Option<u64>,
    pub flush: Option<bool>,
    pub sequential: Option<bool>,
    pub warm: Option<bool>,
    /// The global memory (0-based) holding the benchmark's lines (default 0, domain 0's).
    pub home: Option<u32>,
    /// flush: `clflush`, `clflushopt` or `clwb`; the lines' state before
    /// it (`r`, `m` or `i`); lines per repetition; repetitions; a measured
    /// load of each line after the fence.
    pub op: Option<String>,
    pub state: Option<String>,
    pub lines: Option<u64>,
    pub reps: Option<u64>,
    pub reread: Option<bool>,
    /// periodic (also `working_set`, `warm`, and `op`: `clflushopt` or
    /// `clflush`): who invalidates (`noflush`, `same` core, `other` core,
    /// `aggressive`: each line after its load); the period; periods run,
    /// and of them those not measured (default 1 of 2 or more); loads
    /// after an invalidation after which the loader idles to the next (0:
    /// never); whether each load's address comes from the previous load
    /// (a pointer chase: one miss at a time; default false, the loads
    /// overlap up to the core's `fill_buffers`).
    pub mode: Option<String>,
    pub period: Option<Duration>,
    pub periods: Option<u64>,
    pub skip: Option<u64>,
    pub settle: Option<u64>,
    pub dependent: Option<bool>,
}

/// `[protocol.bi]`: the domains from the system's shape, the caches,
/// the costs (defaults: `agents::bi::Params`), the benchmark.
pub fn resolve(table: &BiConfig, m: &Machine) -> Result<BiSpec, ParamError> {
    let (caches, dirs, line) = (m.cores, m.homes, m.line_bytes as u64);
    use crate::agents::bi::{Bench, FlushMode, FlushOp, LineState, Params, Shapes, MAX_DOMAIN_CORES, MUTANTS};
    use crate::agents::cache::{CacheGeometry, VictimPolicy};
    use crate::engine::{MS, NS};
    let c = table.clone();
    let key = |k: &str| format!("protocol.bi.{k}");
    let domains = c.domains.unwrap_or(1) as usize;
    if domains == 0 || domains > 64 {
        return Err(ParamError::new(key("domains"), format!("{domains}: expected 1 to 64 coherence domains")));
    }
    if caches == 0 || !caches.is_multiple_of(domains) || caches / domains > MAX_DOMAIN_CORES {
        return Err(ParamError::new(
            "requester",
            format!(
                "{caches} requesters: bi's requesters are the cores, the same number in each of the {domains} \
                 domains (at most {MAX_DOMAIN_CORES} each: a domain's sharer set is 64 bits); expected a multiple \
                 of {domains}"
            ),
        ));
    }
    if dirs <= domains {
        return Err(ParamError::new(
            "memory",
            format!(
                "{dirs} memories: bi's homes are the {domains} domains' LLCs, then the global memories; \
                 expected more than {domains}"
            ),
        ));
    }
    // agent ids are one byte engine-wide
    if caches + dirs > 255 {
        return Err(ParamError::new(
            "requester",
            format!("{caches} cores and {dirs} memories: expected at most 255 agents in all"),
        ));
    }
    let policy = match &c.policy {
        None => VictimPolicy::Lru,
        Some(p) => VictimPolicy::parse(p).map_err(|e| ParamError::new(key("policy"), e))?,
    };
    let geometry = |name: &str, size: Option<crate::engine::units::Size>, ways: Option<u32>, d: (u64, u32)| {
        let (size, ways) = (size.map_or(d.0, |s| s.bytes()), ways.unwrap_or(d.1));
        CacheGeometry::new(size, line, ways).map_err(|e| {
            let k = if e.key() == "ways" { format!("{name}_ways") } else { format!("{name}_size") };
            ParamError::new(key(&k), e.to_string())
        })
    };
    let shapes = Shapes {
        l1: geometry("l1", c.l1_size, c.l1_ways, (32 << 10, 8))?,
        l2: geometry("l2", c.l2_size, c.l2_ways, (1 << 20, 16))?,
        l3: geometry("l3", c.l3_size, c.l3_ways, (1_375 * (1 << 20) * 28 / 1000, 11))?,
        policy,
    };
    let d = Params::default();
    let time = |k: &str, v: Option<crate::engine::units::Duration>, def: crate::engine::Time| {
        let t = v.map_or(def, |v| v.ps());
        if t > MS {
            return Err(ParamError::new(
                key(k),
                format!("{}: expected at most 1ms", crate::engine::units::Duration(t)),
            ));
        }
        Ok(t)
    };
    let params = Params {
        l1_latency: time("l1_latency", c.l1_latency, d.l1_latency)?,
        l2_latency: time("l2_latency", c.l2_latency, d.l2_latency)?,
        l3_latency: time("l3_latency", c.l3_latency, d.l3_latency)?,
        memory_latency: time("memory_latency", c.memory_latency, d.memory_latency)?,
        memory_write: time("memory_write", c.memory_write, d.memory_write)?,
        writeback_service: time("writeback_service", c.writeback_service, d.writeback_service)?,
        flush_issue: time("flush_issue", c.flush_issue, d.flush_issue)?,
        fill_buffers: match c.fill_buffers {
            None => d.fill_buffers,
            Some(n @ 1..=1024) => n as u16,
            Some(n) => {
                return Err(ParamError::new(key("fill_buffers"), format!("{n}: expected 1 to 1024 misses in flight")))
            }
        },
        broadcast: time("broadcast", c.broadcast, d.broadcast)?,
        fence: time("fence", c.fence, d.fence)?,
        clwb_invalidates: c.clwb_invalidates.unwrap_or(d.clwb_invalidates),
        broadcast_on_miss: c.broadcast_on_miss.unwrap_or(d.broadcast_on_miss),
    };
    if !(params.l1_latency <= params.l2_latency
        && params.l2_latency <= params.l3_latency
        && params.l3_latency <= params.memory_latency)
    {
        return Err(ParamError::new(
            key("l3_latency"),
            "expected l1_latency <= l2_latency <= l3_latency <= memory_latency (each is a load's total time)",
        ));
    }
    let interleave = match c.interleave {
        // each memory a contiguous range (a NUMA node's): see agents/bi/mod.rs
        None => ((1u64 << 30) / line).max(1),
        Some(g) if g.bytes() >= line && g.bytes().is_multiple_of(line) => g.bytes() / line,
        Some(g) => {
            return Err(ParamError::new(
                key("interleave"),
                format!("{} B: expected a positive multiple of the line ({line} B)", g.bytes()),
            ))
        }
    };
    let mutant = match &c.mutant {
        None => None,
        Some(m) => Some(MUTANTS.iter().find(|x| x.0 == m).map(|x| x.1).ok_or_else(|| {
            ParamError::new(
                key("mutant"),
                format!("{m:?}: expected one of {}", MUTANTS.iter().map(|m| m.0).collect::<Vec<_>>().join(", ")),
            )
        })?),
    };
    let mut bench_home = None;
    let bench = match &c.bench {
        None => None,
        Some(b) => {
            let bkey = |k: &str| format!("protocol.bi.bench.{k}");
            let mems = dirs - domains;
            let home = b.home.unwrap_or(0) as usize;
            if home >= mems {
                return Err(ParamError::new(
                    bkey("home"),
                    format!("{home}: expected a global memory, 0 to {}", mems - 1),
                ));
            }
            bench_home = Some(home);
            let read_keys = [
                ("working_set", b.working_set.is_some()),
                ("ops", b.ops.is_some()),
                ("flush", b.flush.is_some()),
                ("sequential", b.sequential.is_some()),
                ("warm", b.warm.is_some()),
            ];
            let flush_keys = [
                ("op", b.op.is_some()),
                ("state", b.state.is_some()),
                ("lines", b.lines.is_some()),
                ("reps", b.reps.is_some()),
                ("reread", b.reread.is_some()),
            ];
            let periodic_keys = [
                ("mode", b.mode.is_some()),
                ("period", b.period.is_some()),
                ("periods", b.periods.is_some()),
                ("skip", b.skip.is_some()),
                ("settle", b.settle.is_some()),
                ("dependent", b.dependent.is_some()),
            ];
            let ws_lines = |def: u64| -> Result<u64, ParamError> {
                let ws = b.working_set.map_or(def, |s| s.bytes());
                let lines = ws / line;
                if lines == 0 || lines > 1 << 26 {
                    return Err(ParamError::new(
                        bkey("working_set"),
                        format!("{ws} B: expected one line to 4 GiB ({} lines of {line} B)", 1u64 << 26),
                    ));
                }
                Ok(lines)
            };
            let refuse = |keys: &[(&str, bool)], kind: &str| -> Result<(), ParamError> {
                match keys.iter().find(|k| k.1) {
                    Some((k, _)) => Err(ParamError::new(bkey(k), format!("does not apply to kind = {kind:?}"))),
                    None => Ok(()),
                }
            };
            match b.kind.as_str() {
                "read" => {
                    refuse(&flush_keys, "read")?;
                    refuse(&periodic_keys, "read")?;
                    let lines = ws_lines(32 << 10)?;
                    let ops = b.ops.unwrap_or(10_000);
                    if ops == 0 || ops > 1 << 32 {
                        return Err(ParamError::new(bkey("ops"), format!("{ops}: expected 1 to 2^32 loads")));
                    }
                    Some(Bench::Read {
                        lines,
                        ops,
                        flush: b.flush.unwrap_or(false),
                        sequential: b.sequential.unwrap_or(false),
                        warm: b.warm.unwrap_or(true),
                    })
                }
                "flush" => {
                    refuse(&read_keys, "flush")?;
                    refuse(&periodic_keys, "flush")?;
                    let name = b.op.as_deref().unwrap_or("clflushopt");
                    let op = FlushOp::parse(name).ok_or_else(|| {
                        ParamError::new(
                            bkey("op"),
                            format!("{name:?}: expected \"clflush\", \"clflushopt\" or \"clwb\""),
                        )
                    })?;
                    let st = b.state.as_deref().unwrap_or("r");
                    let state = LineState::parse(st).ok_or_else(|| {
                        ParamError::new(bkey("state"), format!("{st:?}: expected \"r\", \"m\" or \"i\""))
                    })?;
                    let lines = b.lines.unwrap_or(64);
                    if lines == 0 || lines > 1 << 24 {
                        return Err(ParamError::new(bkey("lines"), format!("{lines}: expected 1 to 2^24 lines")));
                    }
                    let reps = b.reps.unwrap_or(4);
                    if reps == 0 || reps.saturating_mul(lines) > 1 << 28 {
                        return Err(ParamError::new(bkey("reps"), format!("{reps}: expected 1 to 2^28 / lines")));
                    }
                    Some(Bench::Flush { op, state, lines, reps, reread: b.reread.unwrap_or(false) })
                }
                "periodic" => {
                    refuse(&read_keys[1..4], "periodic")?;
                    refuse(&[flush_keys[1], flush_keys[2], flush_keys[3], flush_keys[4]], "periodic")?;
                    let lines = ws_lines(1 << 20)?;
                    let name = b.mode.as_deref().unwrap_or("same");
                    let mode = FlushMode::parse(name).ok_or_else(|| {
                        ParamError::new(
                            bkey("mode"),
                            format!("{name:?}: expected \"noflush\", \"same\", \"other\" or \"aggressive\""),
                        )
                    })?;
                    let cores = caches / domains;
                    if mode == FlushMode::Other && cores < 2 {
                        return Err(ParamError::new(
                            bkey("mode"),
                            format!(
                                "\"other\": the flusher is domain 0's second core, and a domain has {cores}; \
                                 expected at least 2 cores per domain"
                            ),
                        ));
                    }
                    let name = b.op.as_deref().unwrap_or("clflushopt");
                    let op = match FlushOp::parse(name) {
                        Some(op @ (FlushOp::Clflushopt | FlushOp::Clflush)) => op,
                        _ => {
                            return Err(ParamError::new(
                                bkey("op"),
                                format!("{name:?}: expected \"clflushopt\" or \"clflush\" (an invalidation)"),
                            ))
                        }
                    };
                    let period = b.period.map_or(MS, |d| d.ps());
                    if !(NS..=1000 * MS).contains(&period) {
                        return Err(ParamError::new(
                            bkey("period"),
                            format!("{}: expected 1ns to 1s", crate::engine::units::Duration(period)),
                        ));
                    }
                    let periods = b.periods.unwrap_or(2);
                    if periods == 0 || periods > 1000 {
                        return Err(ParamError::new(bkey("periods"), format!("{periods}: expected 1 to 1000 periods")));
                    }
                    if period.checked_mul(periods).is_none_or(|t| t > 10_000 * MS) {
                        return Err(ParamError::new(
                            bkey("periods"),
                            format!(
                                "{periods} periods of {}: expected at most 10s in all",
                                crate::engine::units::Duration(period)
                            ),
                        ));
                    }
                    let skip = b.skip.unwrap_or((periods > 1) as u64);
                    if skip >= periods {
                        return Err(ParamError::new(
                            bkey("skip"),
                            format!("{skip}: expected fewer than the {periods} periods (one must be measured)"),
                        ));
                    }
                    let settle = b.settle.unwrap_or(0);
                    if settle > 1 << 40 {
                        return Err(ParamError::new(bkey("settle"), format!("{settle}: expected 0 to 2^40 loads")));
                    }
                    Some(Bench::Periodic {
                        lines,
                        mode,
                        op,
                        period,
                        periods,
                        skip,
                        settle,
                        dependent: b.dependent.unwrap_or(false),
                        warm: b.warm.unwrap_or(true),
                    })
                }
                k => {
                    return Err(ParamError::new(
                        bkey("kind"),
                        format!("{k:?}: expected \"read\" or \"flush\" (Figs 3 and 11) or \"periodic\" (Fig 12)"),
                    ))
                }
            }
        }
    };
    let coherent = c.coherent.unwrap_or(false);
    use crate::agents::bi::Mutant as M;
    if let Some(m @ (M::HomeForgetsSharer | M::FlushBroadcast)) = mutant.filter(|_| !coherent) {
        let name = crate::agents::bi::MUTANTS.iter().find(|x| x.1 == m).map_or("", |x| x.0);
        return Err(ParamError::new(key("mutant"), format!("{name:?}: applies to coherent = true only")));
    }
    let tree = match &c.tree {
        None => None,
        Some(t) => {
            let tkey = |k: &str| format!("protocol.bi.tree.{k}");
            if bench.is_some() {
                return Err(ParamError::new(
                    tkey("nodes"),
                    "a tree and a bench: expected one of [protocol.bi.bench] and [protocol.bi.tree]",
                ));
            }
            if caches < 2 {
                return Err(ParamError::new(
                    "requester",
                    format!("{caches} cores: the tree needs the delegate and at least one reader"),
                ));
            }
            let nodes = t.nodes.unwrap_or(1024);
            if !(1..=1 << 22).contains(&nodes) {
                return Err(ParamError::new(tkey("nodes"), format!("{nodes}: expected 1 to 2^22 nodes")));
            }
            let updates = t.updates.unwrap_or(0.1);
            if !(0.0..=1.0).contains(&updates) {
                return Err(ParamError::new(tkey("updates"), format!("{updates}: expected a share from 0 to 1")));
            }
            let time = t.time.map_or(2 * MS, |d| d.ps());
            let warmup = t.warmup.map_or(time / 2, |d| d.ps());
            if time == 0 || time > 1000 * MS {
                return Err(ParamError::new(
                    tkey("time"),
                    format!("{}: expected up to 1s", crate::engine::units::Duration(time)),
                ));
            }
            if warmup >= time {
                return Err(ParamError::new(
                    tkey("warmup"),
                    format!(
                        "{}: expected less than time ({})",
                        crate::engine::units::Duration(warmup),
                        crate::engine::units::Duration(time)
                    ),
                ));
            }
            let period = t.period.map_or(MS, |d| d.ps());
            if !(NS..=1000 * MS).contains(&period) {
                return Err(ParamError::new(
                    tkey("period"),
                    format!("{}: expected 1ns to 1s", crate::engine::units::Duration(period)),
                ));
            }
            let log_cap = t.log_cap.unwrap_or(16_384);
            if !(16..=1 << 20).contains(&log_cap) {
                return Err(ParamError::new(tkey("log_cap"), format!("{log_cap}: expected 16 to 2^20 records")));
            }
            let store_buffer = match t.store_buffer {
                None => Some(crate::agents::bi::CORE.core.store_buffer),
                Some(0) => None,
                Some(n @ 1..=1024) => Some(n),
                Some(n) => {
                    return Err(ParamError::new(tkey("store_buffer"), format!("{n}: expected 0 to 1024 entries")))
                }
            };
            let front_end = match t.front_end.as_deref().unwrap_or("bi") {
                "bi" => crate::agents::bi::tree::FrontEnd::Bi,
                "urcu" if c.coherent == Some(true) => crate::agents::bi::tree::FrontEnd::Urcu,
                "urcu" => {
                    return Err(ParamError::new(
                        tkey("front_end"),
                        "\"urcu\": U-RCU runs on the coherent machine; expected protocol.bi.coherent = true",
                    ))
                }
                f => return Err(ParamError::new(tkey("front_end"), format!("{f:?}: expected \"bi\" or \"urcu\""))),
            };
            use crate::agents::bi::runtime::RtMutant;
            let rt_mutants = [
                ("no-period-subtraction", RtMutant::NoPeriodSubtraction),
                ("no-free-mark-check", RtMutant::NoFreeMarkCheck),
                ("enter-before-exit", RtMutant::EnterBeforeExit),
            ];
            let rt_mutant = match &t.mutant {
                None => None,
                Some(m) => Some(rt_mutants.iter().find(|x| x.0 == m).map(|x| x.1).ok_or_else(|| {
                    ParamError::new(
                        tkey("mutant"),
                        format!("{m:?}: expected one of {}", rt_mutants.map(|x| x.0).join(", ")),
                    )
                })?),
            };
            Some(crate::agents::bi::tree::TreeBench {
                nodes,
                updates,
                warmup,
                end: time,
                period,
                deferred_writeback: t.deferred_writeback.unwrap_or(true),
                log_cap,
                d: t.skew_margin.map_or(0, |d| d.ps()),
                front_end,
                mutant: rt_mutant,
                store_buffer,
            })
        }
    };
    Ok(BiSpec { domains, params, shapes, interleave, bench, bench_home, mutant, coherent, tree })
}
