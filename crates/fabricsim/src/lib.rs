//! fabricsim: a simulator and model checker for memory coherence, memory
//! ordering and interconnect fabrics.
//!
//! Layers (docs/architecture.md): [`engine`] (time and events), [`fabric`]
//! (topology, links, switches, routing, credits), [`agents`] (what packets
//! mean), [`workloads`] (what requesters do), [`stats`] (outputs),
//! [`config`] (strict configuration) and [`sim`] (the timing engine that
//! puts them together).

pub mod agents;
pub mod bench;
pub mod check;
pub mod config;
pub mod engine;
pub mod error;
pub mod fabric;
pub mod programs;
pub mod registry;
pub mod sim;
pub mod spec;
pub mod stats;
pub mod workloads;

pub use config::{ConfigError, Format};
pub use sim::{Outcome, RunResult, System};
pub use spec::SystemSpec;

pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// Validate a configuration and run it.
pub fn run_text(
    text: &str,
    source: &str,
    fmt: Format,
    overrides: &[String],
    seed: Option<u64>,
    progress: &mut dyn FnMut(f64) -> bool,
) -> Result<RunResult, ConfigError> {
    let spec = config::resolve(text, source, fmt, overrides, seed)?;
    Ok(run_spec(&spec, progress))
}

/// Run a validated system: a coherence protocol if it names one, else its
/// request/response workload.
pub fn run_spec(spec: &SystemSpec, progress: &mut dyn FnMut(f64) -> bool) -> RunResult {
    let mut r = match &spec.protocol {
        Some(p) => run_protocol(spec, p, progress),
        None => System::build(spec).run(progress),
    };
    // the configuration's warnings first: they may explain the run's
    r.warnings.splice(0..0, spec.warnings.iter().cloned());
    r
}

/// The protocol a `[protocol]` table names, on the generic timing engine.
/// Adding a protocol adds an arm here; the engine does not change.
fn run_protocol(spec: &SystemSpec, ps: &spec::ProtocolSpec, progress: &mut dyn FnMut(f64) -> bool) -> RunResult {
    use agents::coherence::core::FrontEnd;
    use agents::coherence::directory::{CacheShape, Directory, Variant};
    use agents::coherence::german::German;
    use sim::protocol::ProtocolSystem;

    fn go<P: agents::protocol::Protocol>(
        spec: &SystemSpec,
        ps: &spec::ProtocolSpec,
        p: P,
        progress: &mut dyn FnMut(f64) -> bool,
    ) -> RunResult {
        // resolve() checked the agent counts against the system
        let sys = ProtocolSystem::build(spec, p, ps).expect("the configuration was validated");
        let mut r = sys.run(progress);
        if r.outcome == Outcome::TimeLimit {
            // The event past the limit was not handled: the run ended at the limit.
            r.sim_time = r.sim_time.min(spec.max_time);
            r.window_end = r.window_end.min(spec.max_time).max(r.window_start + 1);
        }
        r
    }
    let caches = spec.requesters.len();
    let dirs = spec.memories.len();
    match ps.name.as_str() {
        "german" => go(spec, ps, German::new(caches, ps.values), progress),
        "dcoh" => {
            use agents::cxl::dcoh::{Dcoh, DcohTiming};
            let d = ps.dcoh.expect("resolve() builds the dcoh spec");
            let c = ps.cache.expect("resolve() requires a dcoh cache");
            let t = DcohTiming {
                cache: c.geometry,
                cache_policy: c.policy,
                sf: d.sf,
                sf_policy: d.sf_policy,
                seed: spec.seed,
            };
            let mut p =
                Dcoh::timed(caches, dirs, ps.locs as u64, d.granule, ps.mshrs, d.max_block, t).with_hdm_h(d.hdm_h);
            p.sc = ps.model == programs::Model::Sc;
            go(spec, ps, p, progress)
        }
        "pcie" => {
            use agents::pcie::Pcie;
            let c = ps.pcie.expect("resolve() builds the pcie spec");
            // with MMIO every requester is a host core
            let hosts = if c.mmio.is_some() { caches } else { c.host_cores };
            let p = Pcie::timed(c.variant, caches - hosts, hosts, ps.locs, c.rlsq_entries, c.window)
                .with_latencies(c.rc_latency, c.host_latency, c.host_cached)
                .with_host_caches(Some(c.host_l2), None)
                .with_mmio(c.mmio, c.rob_entries);
            let p = match c.p2p {
                Some((voq, qps, entries, latency)) => p.with_p2p(voq, qps, entries, latency),
                None => p,
            };
            go(spec, ps, p, progress)
        }
        "bi" => {
            use agents::bi::Bi;
            let b = ps.bi.expect("resolve() builds the bi spec");
            let p = Bi {
                domains: b.domains,
                cores: caches / b.domains,
                mems: dirs - b.domains,
                interleave: b.interleave,
                params: b.params,
                shapes: Some(b.shapes),
                bench: b.bench,
                bench_home: b.bench_home,
                mutant: b.mutant,
                lines: 0,
                values: 0,
                keep_values: false,
                seed: spec.seed,
                coherent: b.coherent,
                program: None,
                tree: b.tree,
            };
            let p = match b.tree {
                Some(t) => {
                    let prog = agents::bi::tree::program(&t, &p, spec.seed);
                    Bi { program: Some(std::sync::Arc::new(prog)), ..p }
                }
                None => p,
            };
            go(spec, ps, p, progress)
        }
        "gcs" => {
            use agents::gcs::Gcs;
            let g = ps.gcs.expect("resolve() builds the gcs spec");
            let p = Gcs {
                region_bytes: g.region,
                page_bytes: g.page,
                blade_latency: g.blade_latency,
                cs: g.critical_section,
                nic_service: g.nic_service,
                ..Gcs::timed(g.variant, g.blades, g.threads, g.locks)
            };
            go(spec, ps, p, progress)
        }
        "cord" => {
            use agents::cord::Cord;
            let c = ps.cord.expect("resolve() builds the cord spec");
            let tso = ps.model == programs::Model::Tso;
            if let Some(prog) = &ps.program {
                let homes = (0..prog.locations.len()).map(|l| ((l as u64 / c.granule) % dirs as u64) as u8).collect();
                let p = Cord {
                    params: c.params,
                    channel_cap: usize::MAX,
                    ..Cord::running(c.variant, prog.clone(), tso, dirs, homes)
                };
                return go(spec, ps, p, progress);
            }
            let max_store = spec
                .requesters
                .iter()
                .filter_map(|r| r.workload.remote_stores.map(|s| s.store_size as u32))
                .max()
                .unwrap_or(0);
            let p = Cord::timed(
                c.variant,
                tso,
                caches,
                dirs,
                ps.locs,
                c.granule,
                c.params,
                c.loads,
                c.store_buffer,
                ps.timing.line_bytes,
            );
            go(spec, ps, Cord { max_store, ..p }, progress)
        }
        name => {
            let variant = if name == "msi" { Variant::Msi } else { Variant::Mesi };
            let fe = match ps.model {
                programs::Model::Sc => FrontEnd::Sc,
                programs::Model::Tso => FrontEnd::Tso,
                programs::Model::Rc => FrontEnd::Rc,
            };
            let p = match &ps.program {
                Some(prog) => Directory::running(variant, prog.clone(), fe, dirs).with_granule(ps.granule as usize),
                None if ps.driver == spec::Driver::Workload => {
                    let cache = ps.cache.map(|c| CacheShape { seed: spec.seed, ..c });
                    Directory::timed(variant, caches, dirs, ps.locs, cache, ps.mshrs, fe)
                        .with_granule(ps.granule as usize)
                }
                None => Directory::free(variant, caches, dirs, ps.locs, 2).with_granule(ps.granule as usize),
            };
            go(spec, ps, p, progress)
        }
    }
}
