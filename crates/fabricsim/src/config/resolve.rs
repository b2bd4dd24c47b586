//! From a typed configuration to a validated system: generated and
//! explicit components, links with their defaults filled in, and each
//! requester's workload.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::Serialize;

use super::load::{load_config, typed, Format, Override};
use super::schema::*;
use super::ConfigError;
use crate::agents::core::presets::Preset as CorePreset;
use crate::agents::family::{CacheUse, RunParams};
use crate::agents::memory::dram::{parse_mapping, DramParams, Page, Preset};
use crate::fabric::topology::{generate, Link, NodeId, NodeKind, ShapeParams, Topology};
use crate::sim::protocol::core_base;
use crate::spec::{CoreSpec, LevelSpec, MemorySpec, ProtocolSpec, RequesterSpec, SystemSpec, Timing};
use crate::workloads::kernels;
use crate::workloads::source::{Kernel, KernelMachine};
use crate::workloads::{trace, WorkloadSpec};

#[derive(Serialize)]
struct Resolved<'a> {
    #[serde(flatten)]
    config: &'a Config,
    /// Counts after topology generation.
    system: Counts,
}

#[derive(Serialize)]
struct Counts {
    requesters: usize,
    memories: usize,
    switches: usize,
    links: usize,
}

/// Load, override, type-check and validate a configuration.
pub fn resolve(
    text: &str,
    source: &str,
    fmt: Format,
    overrides: &[String],
    seed: Option<u64>,
) -> Result<SystemSpec, ConfigError> {
    let (mut config, raw, overrides) = load_config(text, source, fmt, overrides)?;
    if let Some(s) = seed {
        config.sim.seed = s;
    }
    let base_dir = Path::new(source).parent().map(Path::to_path_buf).unwrap_or_default();
    Builder { source, raw: &raw, overrides: &overrides, base_dir }.build(config)
}

struct Builder<'a> {
    source: &'a str,
    raw: &'a toml::Table,
    overrides: &'a [Override],
    base_dir: PathBuf,
}

impl Builder<'_> {
    fn err(&self, key: impl Into<String>, msg: impl Into<String>) -> ConfigError {
        super::load::blame(self.source, self.overrides, key, msg)
    }

    /// Two explicit entries with one name: an error naming both (a
    /// generated component may be overridden once by an explicit entry).
    fn check_unique(&self, explicit: &mut HashMap<String, String>, name: &str, key: &str) -> Result<(), ConfigError> {
        if let Some(first) = explicit.insert(name.to_string(), key.to_string()) {
            return Err(self.err(
                format!("{key}.name"),
                format!("{name:?} is already the name of {first}; expected a unique name"),
            ));
        }
        Ok(())
    }

    fn build(&self, config: Config) -> Result<SystemSpec, ConfigError> {
        if config.sim.max_time.ps() == 0 {
            return Err(self.err("sim.max_time", "0ns: expected a positive time"));
        }
        let d = &config.defaults;
        let mut topo = Topology::default();
        let mut req_nodes: Vec<(NodeId, Option<usize>)> = Vec::new();
        let mut mem_nodes: Vec<(NodeId, Option<usize>)> = Vec::new();

        if let Some(t) = &config.topology {
            self.generate(t, d, config.fabric.routing, &mut topo, &mut req_nodes, &mut mem_nodes)?;
        }
        let mut names: HashMap<String, NodeId> =
            topo.nodes.iter().enumerate().map(|(i, n)| (n.name.clone(), i as NodeId)).collect();
        let mut explicit: HashMap<String, String> = HashMap::new();

        for (i, s) in config.switch.iter().enumerate() {
            let key = format!("switch[{i}]");
            self.check_unique(&mut explicit, &s.name, &key)?;
            let lat = s.latency.unwrap_or(d.switch.latency).ps();
            match names.get(&s.name) {
                Some(&n) if topo.nodes[n as usize].kind == NodeKind::Switch => topo.nodes[n as usize].latency = lat,
                Some(_) => {
                    return Err(self
                        .err(format!("{key}.name"), format!("{:?} is already the name of another component", s.name)))
                }
                None => {
                    self.check_name(&s.name, &format!("{key}.name"))?;
                    let n = topo.add_node(s.name.clone(), NodeKind::Switch, lat);
                    names.insert(s.name.clone(), n);
                }
            }
        }
        for (i, r) in config.requester.iter().enumerate() {
            let key = format!("requester[{i}]");
            self.check_unique(&mut explicit, &r.name, &key)?;
            match names.get(&r.name) {
                Some(&n) if topo.nodes[n as usize].kind == NodeKind::Requester => {
                    let slot = req_nodes.iter_mut().find(|(m, _)| *m == n).expect("generated requester listed");
                    slot.1 = Some(i);
                }
                Some(_) => {
                    return Err(self
                        .err(format!("{key}.name"), format!("{:?} is already the name of another component", r.name)))
                }
                None => {
                    self.check_name(&r.name, &format!("{key}.name"))?;
                    let n = topo.add_node(r.name.clone(), NodeKind::Requester, 0);
                    names.insert(r.name.clone(), n);
                    req_nodes.push((n, Some(i)));
                }
            }
        }
        for (i, m) in config.memory.iter().enumerate() {
            let key = format!("memory[{i}]");
            self.check_unique(&mut explicit, &m.name, &key)?;
            match names.get(&m.name) {
                Some(&n) if topo.nodes[n as usize].kind == NodeKind::Memory => {
                    let slot = mem_nodes.iter_mut().find(|(x, _)| *x == n).expect("generated memory listed");
                    slot.1 = Some(i);
                }
                Some(_) => {
                    return Err(self
                        .err(format!("{key}.name"), format!("{:?} is already the name of another component", m.name)))
                }
                None => {
                    self.check_name(&m.name, &format!("{key}.name"))?;
                    let n = topo.add_node(m.name.clone(), NodeKind::Memory, 0);
                    names.insert(m.name.clone(), n);
                    mem_nodes.push((n, Some(i)));
                }
            }
        }
        for (i, l) in config.link.iter().enumerate() {
            let key = format!("link[{i}]");
            let find = |end: &str, name: &str| -> Result<NodeId, ConfigError> {
                names.get(name).copied().ok_or_else(|| {
                    let mut known: Vec<&str> = topo.nodes.iter().map(|n| n.name.as_str()).collect();
                    known.truncate(12);
                    self.err(
                        format!("{key}.{end}"),
                        format!(
                            "{name:?}: no component has this name; expected one of {}{}",
                            known.join(", "),
                            if topo.nodes.len() > 12 { ", ..." } else { "" }
                        ),
                    )
                })
            };
            let a = find("a", &l.a)?;
            let b = find("b", &l.b)?;
            if a == b {
                return Err(
                    self.err(format!("{key}.b"), format!("{:?}: a link must join two different components", l.b))
                );
            }
            let p = &d.link;
            let duplex = l.duplex.unwrap_or(p.duplex);
            if l.turnaround.is_some() && duplex == Duplex::Full {
                return Err(self.err(
                    format!("{key}.turnaround"),
                    "does not apply to a full-duplex link; set duplex = \"half\" or remove it",
                ));
            }
            topo.add_link(Link {
                a,
                b,
                bandwidth: l.bandwidth.unwrap_or(p.bandwidth),
                latency: l.latency.unwrap_or(p.latency).ps(),
                port_delay: l.port_delay.unwrap_or(p.port_delay).ps(),
                duplex: l.duplex.unwrap_or(p.duplex),
                turnaround: l.turnaround.unwrap_or(p.turnaround).ps(),
            });
        }
        // Every place a link's bandwidth is given, in the order an error names it.
        let infinite = config
            .link
            .iter()
            .position(|l| l.bandwidth.is_some_and(|b| b.is_infinite()))
            .map(|i| format!("link[{i}].bandwidth"))
            .or_else(|| d.link.bandwidth.is_infinite().then(|| "defaults.link.bandwidth".to_string()))
            .or_else(|| {
                let t = config.topology.as_ref().and_then(|t| t.switch_link_bandwidth);
                t.is_some_and(|b| b.is_infinite()).then(|| "topology.switch_link_bandwidth".to_string())
            });
        if let Some(key) = infinite {
            return Err(self.err(key, "inf: a link needs a finite bandwidth like '64GB/s' or 'PCIe5x16'"));
        }

        // Memory and build time of the routing tables, before the workload's
        // flows are known (checked again with them below).
        let shape = crate::fabric::routing::RoutingTable::shape_of(&topo);
        let size_key = if config.topology.is_some() { "topology" } else { "link" };
        let what = format!("the system: {} nodes and {} links", topo.nodes.len(), topo.links.len());
        let n_req = req_nodes.len() as u64;
        crate::config::limits::check_system(config.fabric.routing, &shape, topo.links.len() as u64, n_req, 0, &what)
            .map_err(|m| self.err(size_key, m))?;
        self.check_dor(&config, &topo)?;
        if req_nodes.is_empty() {
            return Err(self.err("requester", "the system has no requester; add [[requester]] or topology.requesters"));
        }
        if mem_nodes.is_empty() {
            return Err(self.err("memory", "the system has no memory; add [[memory]] or topology.memories"));
        }
        for (i, n) in topo.nodes.iter().enumerate() {
            if n.ports.is_empty() {
                let what = n.kind.name();
                return Err(self.err(
                    "link",
                    format!("{what} {:?} is not connected to anything (disconnected graph)", topo.nodes[i].name),
                ));
            }
        }

        let mut memories: Vec<MemorySpec> = mem_nodes
            .iter()
            .map(|&(node, cfg)| {
                let c = cfg.map(|i| &config.memory[i]);
                MemorySpec {
                    node,
                    latency: c.and_then(|c| c.latency).unwrap_or(d.memory.latency).ps(),
                    bandwidth: c.and_then(|c| c.bandwidth).unwrap_or(d.memory.bandwidth),
                    queue: c.and_then(|c| c.queue).unwrap_or(d.memory.queue),
                    dram: None,
                }
            })
            .collect();
        self.memory_models(&config, &mem_nodes, &mut memories)?;
        for (i, m) in memories.iter().enumerate() {
            if m.queue == 0 {
                let key =
                    mem_nodes[i].1.map(|j| format!("memory[{j}].queue")).unwrap_or("defaults.memory.queue".into());
                return Err(self.err(key, "0: expected at least 1"));
            }
        }
        let mem_names: Vec<String> = memories.iter().map(|m| topo.nodes[m.node as usize].name.clone()).collect();
        let req_names: Vec<String> = req_nodes.iter().map(|&(n, _)| topo.nodes[n as usize].name.clone()).collect();

        let mut trace_cache: Option<Arc<Vec<trace::TraceRecord>>> = None;
        // the first requester's kernel keys, as the configuration records them
        let mut kernel_keys: Option<(String, serde_json::Value)> = None;
        let mut requesters = Vec::new();
        for (ri, &(node, cfg)) in req_nodes.iter().enumerate() {
            let c = cfg.map(|i| &config.requester[i]);
            let (mut wl_table, prefix) = self.workload_table(c.and_then(|c| c.workload.as_ref()), cfg);
            let tables = super::load::kernel_tables(&mut wl_table);
            super::load::moved_kernel_keys(&wl_table, &prefix).map_err(|(key, msg)| self.err(key, msg))?;
            let wc: WorkloadConfig = typed(wl_table, self.source, &prefix, self.overrides)?;
            let (mut w, keys) = self.workload(&wc, &prefix, &mem_names, tables)?;
            if ri == 0 {
                kernel_keys = keys.map(|k| (wc.pattern.clone(), k));
            }
            if w.pattern == Pattern::Trace {
                let path = wc.trace.clone().ok_or_else(|| {
                    self.err(format!("{prefix}.trace"), "missing: pattern = \"trace\" needs a trace file")
                })?;
                if trace_cache.is_none() {
                    let full = self.base_dir.join(&path);
                    let text = std::fs::read_to_string(&full).map_err(|e| {
                        self.err(format!("{prefix}.trace"), format!("{:?}: cannot read {}: {e}", path, full.display()))
                    })?;
                    trace_cache = Some(Arc::new(trace::parse(&text, &full.display().to_string(), &req_names)?));
                }
                let all = trace_cache.as_ref().expect("trace loaded");
                let mine: Vec<_> = all.iter().filter(|r| r.requester == ri as u32).copied().collect();
                w.trace = Some(Arc::new(mine));
            } else if wc.trace.is_some() {
                return Err(self.err(format!("{prefix}.trace"), "a trace file is only read with pattern = \"trace\""));
            }
            requesters.push(RequesterSpec {
                node,
                issue_latency: c.and_then(|c| c.issue_latency).unwrap_or(d.requester.issue_latency).ps(),
                cache_latency: c.and_then(|c| c.cache_latency).unwrap_or(d.requester.cache_latency).ps(),
                workload: w,
            });
        }

        let flows: u64 = requesters.iter().map(|r| 2 * r.workload.targets.len() as u64).sum();
        crate::config::limits::check_system(
            config.fabric.routing,
            &shape,
            topo.links.len() as u64,
            requesters.len() as u64,
            flows,
            &format!("the system with {flows} (source, destination) flows"),
        )
        .map_err(|m| self.err(size_key, m))?;
        // Every requester must reach each of its memories through switches.
        let reach = topo.reachability();
        for r in &requesters {
            for &t in &r.workload.targets {
                let m = memories[t as usize].node;
                if !reach.connected(&topo, r.node, m) {
                    return Err(self.err(
                        "link",
                        format!(
                            "disconnected graph: requester {:?} cannot reach memory {:?} (only switches forward packets)",
                            topo.nodes[r.node as usize].name, topo.nodes[m as usize].name
                        ),
                    ));
                }
            }
        }

        let n_sw = topo.nodes.iter().filter(|n| n.kind.is_switch()).count();
        let mut resolved = serde_json::to_value(Resolved {
            config: &config,
            system: Counts {
                requesters: requesters.len(),
                memories: memories.len(),
                switches: n_sw,
                links: topo.links.len(),
            },
        })
        .expect("config serializes");
        if let Some((name, keys)) = kernel_keys {
            resolved["workload"][name] = keys;
        }
        let protocol = match &config.protocol {
            None if requesters.iter().any(|r| r.workload.kernel.is_some()) => {
                let names: Vec<String> = kernels::KERNELS.iter().map(|k| format!("{:?}", k.name())).collect();
                return Err(self.err(
                    "workload.pattern",
                    format!(
                        "{} drive the cores of a [protocol] (their releases and acquires need one); expected a \
                         [protocol] table, or another pattern",
                        crate::error::and_list(&names.iter().map(|n| n.as_str()).collect::<Vec<_>>())
                    ),
                ));
            }
            None if requesters.iter().any(|r| r.workload.instructions > 0 || r.workload.dependent > 0.0) => {
                let key =
                    if requesters.iter().any(|r| r.workload.instructions > 0) { "instructions" } else { "dependent" };
                return Err(self.err(
                    format!("workload.{key}"),
                    "applies to the workload-driven cores of a [protocol] (their core front end); expected a \
                     [protocol] table, or no such key",
                ));
            }
            None => None,
            Some(_) if requesters.iter().any(|r| r.workload.posted_writes) => {
                return Err(self.err(
                    "workload.posted_writes",
                    "true: applies to request/response traffic; the cores of a [protocol] send the messages \
                     their protocol defines",
                ))
            }
            Some(pc) => {
                let (p, table) = self.protocol(pc, &requesters, &memories, &topo)?;
                // the family tables, as the configuration records them: the named one's, null for the others
                for f in crate::registry::FAMILIES.iter().filter(|f| f.has_table()) {
                    let v = if f.name() == pc.name { table.clone() } else { serde_json::Value::Null };
                    resolved["protocol"][f.name()] = v;
                }
                Some(p)
            }
        };
        if let Some(buffer) = config.fabric.buffer.bytes() {
            let largest = match &protocol {
                // as the timing engine sizes its buffers
                Some(p) => {
                    let family = crate::registry::find(&p.name).expect("a resolved protocol is registered");
                    let (lines, payload) = family.largest_message(&p.params);
                    p.timing.message_bytes(lines).max(p.timing.control_bytes + payload) as u64
                }
                None => requesters.iter().map(|r| r.workload.max_packet() as u64).max().unwrap_or(0),
            };
            let largest = config.fabric.flit.map_or(largest, |f| f.wire_bytes(largest as u32) as u64);
            if (buffer as u64) < largest {
                return Err(self.err(
                    "fabric.buffer",
                    format!(
                        "{}: smaller than the largest packet ({largest}B), which could never enter a buffer (deadlock); expected at least {largest}B or 'auto'",
                        super::units::Size(buffer as u64)
                    ),
                ));
            }
        }
        let warnings = protocol.as_ref().map_or_else(Vec::new, cache_warnings);
        Ok(SystemSpec {
            name: config.name.clone(),
            seed: config.sim.seed,
            max_time: config.sim.max_time.ps(),
            fabric: config.fabric.clone(),
            topology: topo,
            requesters,
            memories,
            resolved,
            protocol,
            warnings,
        })
    }

    fn protocol(
        &self,
        pc: &ProtocolConfig,
        requesters: &[RequesterSpec],
        memories: &[MemorySpec],
        topo: &Topology,
    ) -> Result<(ProtocolSpec, serde_json::Value), ConfigError> {
        use crate::spec::Driver;
        let caches = requesters.len();
        let dirs = memories.len();
        let cores = self.placement(
            pc.cores.as_deref(),
            "protocol.cores",
            "requester",
            requesters.iter().map(|r| r.node),
            topo,
        )?;
        let homes =
            self.placement(pc.homes.as_deref(), "protocol.homes", "memory", memories.iter().map(|m| m.node), topo)?;
        let fixed_homes = memories.iter().any(|m| m.dram.is_none());
        let memory_latency = match pc.memory_latency {
            Some(_) if !fixed_homes => {
                return Err(self.err(
                    "protocol.memory_latency",
                    "every memory has model = \"dram\", whose timings give a home's memory reads; \
                     expected no memory_latency (it applies to homes on model = \"fixed\" memories)",
                ))
            }
            Some(d) => d.ps(),
            None => 40 * crate::engine::NS,
        };
        let family = crate::registry::find(&pc.name).filter(|f| f.runs().is_some()).ok_or_else(|| {
            let names: Vec<&str> = crate::registry::timed().map(|f| f.name()).collect();
            let why = match crate::registry::find(&pc.name) {
                Some(_) => " it is checked only (`fabricsim check`), with no timed machine;".to_string(),
                None => {
                    format!(" no such protocol;{}", crate::error::did_you_mean_name(&pc.name, names.iter().copied()))
                }
            };
            self.err("protocol.name", format!("{:?}:{why} expected {}", pc.name, crate::error::or_list(&names)))
        })?;
        let runs = family.runs().expect("a timed family");
        // `[protocol.<name>]` is the table of family <name> only
        if let Some(t) = self.raw.get("protocol").and_then(|p| p.as_table()) {
            if let Some(k) = t.keys().find(|k| **k != pc.name && crate::registry::find(k).is_some()) {
                return Err(
                    self.err(format!("protocol.{k}"), format!("applies to name = {k:?} only, not {:?}", pc.name))
                );
            }
        }
        let raw_table = match self.raw.get("protocol").and_then(|p| p.get(&pc.name)) {
            None => None,
            Some(toml::Value::Table(t)) => Some(t.clone()),
            Some(v) => {
                return Err(
                    self.err(format!("protocol.{}", pc.name), format!("{v}: expected a table of {}'s keys", pc.name))
                )
            }
        };
        let table = family.run_table(raw_table, self.source, self.overrides)?;
        if pc.interleave.is_some() && !runs.interleave {
            let with: Vec<&str> =
                crate::registry::timed().filter(|f| f.runs().is_some_and(|r| r.interleave)).map(|f| f.name()).collect();
            return Err(self.err(
                "protocol.interleave",
                format!("applies to name = {}, not {:?}", crate::error::or_list(&with), pc.name),
            ));
        }
        for (key, given) in [
            ("snoop_filter", pc.snoop_filter.is_some()),
            ("invblk", pc.invblk.is_some()),
            ("hdm_h", pc.hdm_h.is_some()),
        ] {
            if given {
                return Err(self.err(
                    format!("protocol.{key}"),
                    format!("moved to [protocol.dcoh]: give it as protocol.dcoh.{key}"),
                ));
            }
        }
        let model: crate::programs::Model =
            pc.model.parse().map_err(|e: String| self.err("protocol.model", format!("{:?}: {e}", pc.model)))?;
        if pc.directory_queue == 0 {
            return Err(self.err("protocol.directory_queue", "0: expected at least 1 message"));
        }
        // a family's own program (BI's benchmarks) drives its cores
        let bench = table.drives_itself;
        let driver = match pc.driver.as_deref() {
            // a BI benchmark's core runs it on its own
            None if bench => Driver::Own,
            Some(d) if bench => {
                return Err(self.err(
                    "protocol.driver",
                    format!("{d:?}: [protocol.{}] names the program its cores run; expected no driver", pc.name),
                ))
            }
            None if pc.program.is_some() => Driver::Own,
            None => runs.drivers[0],
            Some("program") => Driver::Own,
            Some("random") => Driver::Random,
            Some("workload") => Driver::Workload,
            Some(d) => {
                return Err(
                    self.err("protocol.driver", format!("{d:?}: expected \"program\", \"workload\" or \"random\""))
                )
            }
        };
        if !bench && (driver == Driver::Own) != pc.program.is_some() {
            return Err(self.err(
                "protocol.program",
                "the `program` driver needs a litmus file in `program`, and only it uses one".to_string(),
            ));
        }
        let program = match &pc.program {
            None => None,
            Some(file) => {
                if !runs.programs {
                    return Err(self.err(
                        "protocol.program",
                        format!("{}'s cores run no litmus programs; expected no `program`", pc.name),
                    ));
                }
                let path = self.base_dir.join(file);
                let program = crate::programs::litmus::parse_file(&path)
                    .map_err(|e| ConfigError::new(&format!("{}:{}", e.file, e.line), "", e.message.clone()))?;
                crate::agents::coherence::core::check_protocol_limits(&program)
                    .map_err(|e| self.err("protocol.program", format!("{file:?}: {e}")))?;
                if program.threads.len() != caches {
                    return Err(self.err(
                        "protocol.program",
                        format!(
                            "{file:?} has {} threads but the system has {caches} requesters (caches); expected one per thread",
                            program.threads.len()
                        ),
                    ));
                }
                if dirs == 0 || dirs > program.locations.len().max(1) {
                    return Err(self.err(
                        "memory",
                        format!("{dirs} memories (directories): expected 1 to the number of locations"),
                    ));
                }
                Some(Arc::new(program))
            }
        };
        let line_bytes = requesters.first().map_or(64, |r| r.workload.line);
        if !bench && !runs.drivers.contains(&driver) {
            let names: Vec<&str> = runs.drivers.iter().map(|d| d.name()).collect();
            let note = if runs.drivers_note.is_empty() { String::new() } else { format!(" {};", runs.drivers_note) };
            return Err(self.err(
                "protocol.driver",
                format!("{:?}:{note} expected {}", driver.name(), crate::error::or_list(&names)),
            ));
        }
        let draft = crate::agents::family::Machine {
            cores: caches,
            homes: dirs,
            lines: 0,
            footprint: 0,
            max_store: 0,
            granule: 1,
            line_bytes,
            model,
            driver,
            program: program.clone(),
            cache: None,
            mshrs: 1,
            values: pc.values as usize,
            seed: 0,
            params: RunParams::none(),
        };
        family.check_machine(&draft).map_err(|e| self.err(e.key, e.message))?;
        match (runs.cache, &pc.cache) {
            (CacheUse::Refused(why), Some(_)) => return Err(self.err("protocol.cache", why)),
            (CacheUse::Required(why), None) => return Err(self.err("protocol.cache", why)),
            _ => {}
        }
        let lines = requesters.iter().map(|r| r.workload.footprint / r.workload.line.max(1) as u64).max().unwrap_or(1);
        let mut cache = None;
        let mut mshrs = 1;
        let mut cache_latency = pc.cache_latency.ps();
        if let Some(cp) = &pc.cache {
            if driver != Driver::Workload {
                return Err(self.err("protocol.cache", "applies to workload-driven cores only (driver = \"workload\")"));
            }
            let geometry = cp.validate(self.source, "protocol.cache")?;
            if geometry.line_bytes() as u64 != line_bytes as u64 {
                return Err(self.err(
                    "protocol.cache.line",
                    format!("{} B: expected the workload's line, {line_bytes} B", geometry.line_bytes()),
                ));
            }
            cache = Some(crate::agents::coherence::directory::CacheShape {
                geometry,
                policy: cp.policy,
                seed: 0, // the run's seed, set when the system is built
            });
            mshrs = cp.mshrs.min(u16::MAX as u32) as u16;
            // One of the two times a core's handler; both given would leave one unused.
            if self.raw.get("protocol").and_then(|t| t.get("cache_latency")).is_some() {
                return Err(self.err(
                    "protocol.cache_latency",
                    format!(
                        "{}: with [protocol.cache] its hit_latency ({}) times a core's cache access; give only \
                         protocol.cache.hit_latency",
                        pc.cache_latency, cp.hit_latency
                    ),
                ));
            }
            cache_latency = cp.hit_latency.ps();
        }
        // TSO's store buffer in front of a workload-driven core whose protocol has no TSO of its own
        let tso_buffer = model == crate::programs::Model::Tso && driver == Driver::Workload && runs.front_end;
        let ct = pc.core.as_ref();
        if ct.is_some() && driver != Driver::Workload {
            return Err(self.err("protocol.core", "applies to workload-driven cores only (driver = \"workload\")"));
        }
        let preset = match ct.and_then(|c| c.preset.as_deref()) {
            None => None,
            Some(name) => Some(crate::agents::core::presets::find(name).ok_or_else(|| {
                let names: Vec<&str> = crate::agents::core::presets::PRESETS.iter().map(|p| p.name).collect();
                let close = crate::error::did_you_mean_name(name, names.iter().copied());
                self.err(
                    "protocol.core.preset",
                    format!(
                        "{name:?}: no such core;{close} expected one of {} (docs/cpu-presets.md)",
                        names.join(", ")
                    ),
                )
            })?),
        };
        // `width` and `store_buffer` may be given in [protocol] (as before
        // [protocol.core]) or in [protocol.core], not both
        let (sb_key, sb) = match (pc.store_buffer, ct.and_then(|c| c.store_buffer)) {
            (Some(_), Some(_)) => {
                return Err(self.err(
                    "protocol.core.store_buffer",
                    "also given as protocol.store_buffer: give one of protocol.store_buffer and \
                     protocol.core.store_buffer",
                ))
            }
            (None, Some(n)) => ("protocol.core.store_buffer", Some(n)),
            (n, None) => ("protocol.store_buffer", n),
        };
        let (width_key, width) = match (pc.width, ct.and_then(|c| c.width)) {
            (Some(_), Some(_)) => {
                return Err(self.err(
                    "protocol.core.width",
                    "also given as protocol.width: give one of protocol.width and protocol.core.width",
                ))
            }
            (None, Some(n)) => ("protocol.core.width", Some(n)),
            (n, None) => ("protocol.width", n),
        };
        let store_buffer = match sb {
            // a preset's entries hold the store performing too
            None if tso_buffer => preset.map_or(16, |p| p.core.store_buffer as usize - 1),
            None => 0,
            Some(n) if !tso_buffer => {
                return Err(self.err(
                    sb_key,
                    format!(
                        "{n}: applies to workload-driven {} cores under model = \"tso\" (cord: \
                         protocol.cord.store_buffer)",
                        crate::error::or_list(&front_ends())
                    ),
                ))
            }
            Some(n) if n == 0 || n > 4096 => return Err(self.err(sb_key, format!("{n}: expected 1 to 4096 entries"))),
            Some(n) => n as usize,
        };
        let width = match width {
            None => preset.map_or(1, |p| p.core.width),
            Some(_) if driver != Driver::Workload => {
                return Err(self.err(width_key, "applies to workload-driven cores only (driver = \"workload\")"))
            }
            Some(n) if n == 0 || n > 1024 => {
                return Err(self.err(width_key, format!("{n}: expected 1 to 1024 instructions per issue_interval")))
            }
            Some(n) => n,
        };
        if driver != Driver::Workload {
            if let Some((i, key)) = requesters.iter().enumerate().find_map(|(i, r)| {
                let w = &r.workload;
                (w.instructions > 0).then_some((i, "instructions")).or((w.dependent > 0.0).then_some((i, "dependent")))
            }) {
                return Err(self.err(
                    format!("workload.{key}"),
                    format!("applies to workload-driven protocol cores only (driver = \"workload\"; requester {i})"),
                ));
            }
        }
        if driver == Driver::Workload {
            if let Some(kernel) = requesters.first().and_then(|r| r.workload.kernel.as_ref()) {
                let m =
                    KernelMachine { cores: caches as u64, homes: dirs as u64, lines, line: line_bytes.max(1) as u64 };
                // a kernel's own key is in its table; a workload key (footprint) in [workload]
                let at = |key: &str| match kernels::owners(key).any(|k| k == kernel.name()) {
                    true => format!("workload.{}.{key}", kernel.name()),
                    false => format!("workload.{key}"),
                };
                kernel.check(&m).map_err(|e| self.err(at(e.key), e.message))?;
                match kernel.largest_store() {
                    Some((bytes, key)) if u64::from(bytes) > m.line && !runs.wide_stores => {
                        let with: Vec<&str> = crate::registry::timed()
                            .filter(|f| f.runs().is_some_and(|r| r.wide_stores))
                            .map(|f| f.name())
                            .collect();
                        return Err(self.err(
                            at(key),
                            format!(
                                "{bytes} B: a store of more than a {} B line is one message only under protocol {}",
                                m.line,
                                crate::error::or_list(&with)
                            ),
                        ));
                    }
                    _ => {}
                }
            }
            // A protocol core's operation is on one line: a trace record must not cross a line.
            for r in requesters {
                let line = r.workload.line.max(1) as u64;
                if let Some(t) = &r.workload.trace {
                    let fp = r.workload.footprint;
                    if let Some(x) = t.iter().find(|x| x.addr.saturating_add(x.bytes as u64) > fp) {
                        return Err(self.err(
                            "workload.footprint",
                            format!(
                                "{fp} B, but a record of {} reaches {:#x}; expected a footprint that holds every \
                                 traced address (the protocol's lines)",
                                topo.nodes[r.node as usize].name,
                                x.addr.saturating_add(x.bytes as u64)
                            ),
                        ));
                    }
                    if let Some(x) = t.iter().find(|x| x.addr % line + x.bytes as u64 > line) {
                        return Err(self.err(
                            "workload.trace",
                            format!(
                                "a record of {} at {:#x} of {} B crosses a {line} B line; protocol cores access one \
                                 line per operation: expected records within one line",
                                topo.nodes[r.node as usize].name, x.addr, x.bytes
                            ),
                        ));
                    }
                }
            }
            if lines > u32::MAX as u64 {
                return Err(self.err("workload.footprint", format!("{lines} lines: expected at most 2^32")));
            }
            // Directories hold every line; caches without a capacity do too.
            const LINE_STATE: u64 = 16;
            let copies = if !runs.line_state {
                0 // devices hold snoop filters, sized below; cord keeps no line state
            } else if cache.is_none() {
                caches as u64 + 1
            } else {
                1
            };
            let need = lines.saturating_mul(LINE_STATE).saturating_mul(copies);
            if need > 4 << 30 {
                return Err(self.err(
                    "workload.footprint",
                    format!(
                        "{lines} lines need about {} MiB of line state{}; expected at most 4 GiB",
                        need >> 20,
                        if cache.is_none() {
                            " (every cache holds every line: give [protocol.cache] a size)"
                        } else {
                            ""
                        }
                    ),
                ));
            }
        }
        let machine = crate::agents::family::Machine {
            lines: lines.max(1) as usize,
            footprint: crate::spec::footprint(requesters),
            granule: self.granule(pc, line_bytes as u64)?,
            max_store: crate::spec::max_store(requesters),
            cache,
            mshrs,
            ..draft
        };
        let params = family.resolve_run(&table, &machine).map_err(|e| self.err(e.key, e.message))?;
        if let Some(why) = family.reads_only(&params) {
            // whether a workload only reads is the workload's, which the family cannot see
            let writes = |r: &&RequesterSpec| !r.workload.kernel.as_ref().is_some_and(|k| k.reads_only());
            if let Some(r) = requesters.iter().find(writes) {
                let generic =
                    || serde_json::to_value(r.workload.pattern).ok().and_then(|v| v.as_str().map(String::from));
                let name =
                    r.workload.kernel.as_ref().map(|k| k.name().to_string()).or_else(generic).unwrap_or_default();
                return Err(self.err(
                    "workload.pattern",
                    format!(
                        "{name:?}: {why}; expected \"dma_reads\" or \"kvs_gets\" without fetch-and-adds for every requester"
                    ),
                ));
            }
        }
        if runs.own_latencies {
            cache_latency = 0;
        }
        let mut timing = Timing {
            cache_latency,
            directory_latency: pc.directory_latency.ps(),
            memory_latency,
            control_bytes: pc.control_bytes.bytes().max(1) as u32,
            data_bytes: pc.data_bytes.bytes().max(1) as u32,
            line_bytes,
            issue_interval: match pc.issue_interval {
                Some(d) => d.ps().max(1),
                // a core with a clock of its own has no in-order issue stage
                None if ct.is_some_and(|c| c.preset.is_some() || c.clock.is_some()) => 0,
                None => crate::engine::NS,
            },
            width,
            service: pc.directory_service.ps(),
            queue: pc.directory_queue as usize,
            store_buffer,
            core: None,
        };
        if let Some(c) = ct {
            timing.core = Some(self.core_spec(c, &timing, width_key, preset, runs.front_end)?);
        }
        let spec = ProtocolSpec {
            params,
            name: pc.name.clone(),
            program,
            model,
            timing,
            driver,
            values: pc.values as usize,
            assert_invariants: pc.assert_invariants,
            locs: lines.max(1) as usize,
            granule: machine.granule,
            cache,
            mshrs,
            cores,
            homes,
        };
        Ok((spec, table.resolved))
    }

    /// `[protocol.core]`: the front end's parameters and private levels.
    /// The base is [`core_base`] (the driver's stand-ins; a `preset` key
    /// would pick another base there); each key given overrides it.
    /// `width` and `store_buffer` are already resolved into `t` (from
    /// either place, `width_key` says which).
    fn core_spec(
        &self,
        c: &CoreConfig,
        t: &Timing,
        width_key: &str,
        preset: Option<&CorePreset>,
        caches: bool,
    ) -> Result<CoreSpec, ConfigError> {
        if !caches {
            if let Some(k) = [("l1", c.l1.is_some()), ("l2", c.l2.is_some())].iter().find(|k| k.1) {
                return Err(self.err(
                    format!("protocol.core.{}", k.0),
                    "applies to protocols whose core agent is a cache (msi, mesi, dcoh); this protocol's cores \
                     have none to put a private level in front of",
                ));
            }
        }
        let mut spec = match preset {
            None => {
                let mut base = core_base(t);
                // no issue stage: the default issue interval is the cycle
                if t.issue_interval == 0 {
                    base.front.cycle = crate::engine::NS;
                }
                base
            }
            Some(p) => preset_spec(p, t, caches),
        };
        let f = &mut spec.front;
        f.width = t.width;
        for (v, field) in [
            (c.rob, &mut f.rob),
            (c.load_queue, &mut f.load_queue),
            (c.fill_buffers, &mut f.fill_buffers),
            (c.wc_buffers, &mut f.wc_buffers),
        ] {
            if let Some(n) = v {
                *field = n;
            }
        }
        if let Some(d) = c.clock {
            f.cycle = d.ps();
            // a preset's levels are timed in its core's cycles
            if let Some(p) = preset {
                for (lv, pl) in [(&mut spec.l1, p.l1), (&mut spec.l2, p.l2)] {
                    if let Some(l) = lv {
                        l.latency = pl.latency(f.cycle);
                    }
                }
            }
        }
        if let Some(l) = &c.l1 {
            let level = self.level(l, "protocol.core.l1", t.line_bytes)?;
            match (l.mshrs, c.fill_buffers) {
                (Some(_), Some(_)) => {
                    return Err(self.err(
                        "protocol.core.l1.mshrs",
                        "the L1's miss entries are the front end's fill buffers: give one of \
                         protocol.core.fill_buffers and protocol.core.l1.mshrs",
                    ))
                }
                (Some(n), None) => f.fill_buffers = n,
                _ => {}
            }
            spec.l1 = Some(LevelSpec { mshrs: f.fill_buffers, ..level });
            if c.l2.is_none() {
                // a preset's L2 is not kept under an L1 given here
                spec.l2 = None;
            }
        } else if let (Some(l1), Some(n)) = (&mut spec.l1, c.fill_buffers) {
            l1.mshrs = n;
        }
        if let Some(l) = &c.l2 {
            let key = "protocol.core.l2";
            let Some(l1) = spec.l1 else {
                return Err(self.err(key, "an L2 needs an L1 ([protocol.core.l1])"));
            };
            let level = self.level(l, key, t.line_bytes)?;
            if level.geometry.lines() < l1.geometry.lines() {
                return Err(self.err(
                    format!("{key}.size"),
                    format!(
                        "{} B: the L2 is inclusive of the L1; expected at least protocol.core.l1.size ({} B)",
                        level.geometry.size_bytes(),
                        l1.geometry.size_bytes()
                    ),
                ));
            }
            if level.latency < l1.latency {
                return Err(self.err(
                    format!("{key}.latency"),
                    format!("{} ps: expected at least protocol.core.l1.latency ({} ps)", level.latency, l1.latency),
                ));
            }
            spec.l2 = Some(level);
        }
        spec.front.validate().map_err(|e| {
            let key = match e.field {
                "cycle" => "protocol.core.clock".to_string(),
                "width" => width_key.to_string(),
                "fill_buffers" if c.fill_buffers.is_none() && c.l1.as_ref().is_some_and(|l| l.mshrs.is_some()) => {
                    "protocol.core.l1.mshrs".to_string()
                }
                field => format!("protocol.core.{field}"),
            };
            self.err(key, e.message)
        })?;
        Ok(spec)
    }

    /// `[protocol.core.l1]` or `.l2`: its geometry checked as a
    /// `[protocol.cache]`'s (the line is the protocol's).
    fn level(&self, l: &LevelConfig, key: &str, line: u32) -> Result<LevelSpec, ConfigError> {
        use crate::agents::cache::{CacheParams, Ways};
        use crate::agents::core::MAX_ENTRIES;
        let mshrs = l.mshrs.unwrap_or(16);
        let cp = CacheParams {
            size: l.size,
            line: crate::engine::units::Size(u64::from(line)),
            ways: l.ways.unwrap_or(Ways::Count(8)),
            hit_latency: l.latency,
            mshrs,
            policy: l.policy,
        };
        let geometry = cp.validate(self.source, key)?;
        if mshrs > MAX_ENTRIES {
            return Err(self.err(format!("{key}.mshrs"), format!("{mshrs}: expected 1 to {MAX_ENTRIES}")));
        }
        let latency = l.latency.ps();
        if latency == 0 || latency > crate::agents::core::MAX_CYCLE {
            return Err(self.err(format!("{key}.latency"), format!("{latency} ps: expected 1 ps to 1 us")));
        }
        Ok(LevelSpec { geometry, policy: l.policy, latency, mshrs })
    }

    /// `protocol.interleave` in lines: consecutive lines homed at one
    /// directory (default 1).
    fn granule(&self, pc: &ProtocolConfig, line: u64) -> Result<u64, ConfigError> {
        match pc.interleave {
            None => Ok(1),
            Some(g) if g.bytes() >= line && g.bytes().is_multiple_of(line) => Ok(g.bytes() / line),
            Some(g) => Err(self.err(
                "protocol.interleave",
                format!("{} B: expected a positive multiple of the line ({line} B)", g.bytes()),
            )),
        }
    }

    /// A placement list: the nodes (by name) hosting each agent of a role,
    /// in agent order, or the role's nodes in order. Every node of the
    /// role hosts exactly one agent.
    fn placement(
        &self,
        names: Option<&[String]>,
        key: &str,
        what: &str,
        nodes: impl Iterator<Item = NodeId>,
        topo: &Topology,
    ) -> Result<Vec<usize>, ConfigError> {
        let nodes: Vec<NodeId> = nodes.collect();
        let Some(names) = names else { return Ok((0..nodes.len()).collect()) };
        let known = || nodes.iter().map(|&n| topo.nodes[n as usize].name.as_str()).collect::<Vec<_>>().join(", ");
        if names.len() != nodes.len() {
            return Err(self.err(
                key,
                format!("{} names: expected one per {what} of the system ({}: {})", names.len(), nodes.len(), known()),
            ));
        }
        let mut out = Vec::with_capacity(names.len());
        for (i, name) in names.iter().enumerate() {
            let Some(k) = nodes.iter().position(|&n| topo.nodes[n as usize].name == *name) else {
                return Err(
                    self.err(format!("{key}[{i}]"), format!("{name:?} is not a {what}; expected one of {}", known()))
                );
            };
            if out.contains(&k) {
                return Err(
                    self.err(format!("{key}[{i}]"), format!("{name:?} is named twice; expected each {what} once"))
                );
            }
            out.push(k);
        }
        Ok(out)
    }

    /// Each memory's media model: check that every key set applies to the
    /// model it reaches (a key no memory would use is an error), then build
    /// and validate the DRAM parameters (before anything is allocated).
    fn memory_models(
        &self,
        config: &Config,
        mem_nodes: &[(NodeId, Option<usize>)],
        memories: &mut [MemorySpec],
    ) -> Result<(), ConfigError> {
        let d = &config.defaults.memory;
        let models: Vec<MemoryModel> = mem_nodes
            .iter()
            .map(|&(_, cfg)| cfg.and_then(|i| config.memory[i].model).or(d.model).unwrap_or(MemoryModel::Fixed))
            .collect();
        let default_model = d.model.unwrap_or(MemoryModel::Fixed);
        let model_name = |m: MemoryModel| match m {
            MemoryModel::Fixed => "fixed",
            MemoryModel::Dram => "dram",
        };
        // Keys in [[memory]] entries must fit that memory's model.
        for (k, &(_, cfg)) in mem_nodes.iter().enumerate() {
            let Some(i) = cfg else { continue };
            let c = &config.memory[i];
            match models[k] {
                MemoryModel::Fixed => {
                    if let Some(key) = dram_keys_set(c) {
                        return Err(self.err(
                            format!("memory[{i}].{key}"),
                            format!(
                                "applies only to model = \"dram\"; memory {:?} uses model = \"fixed\"{}",
                                c.name,
                                if c.model.is_none() && d.model.is_none() { " (the default)" } else { "" }
                            ),
                        ));
                    }
                }
                MemoryModel::Dram => {
                    if c.bandwidth.is_some() {
                        return Err(self.err(
                            format!("memory[{i}].bandwidth"),
                            format!(
                                "applies only to model = \"fixed\"; memory {:?} uses model = \"dram\", whose \
                                 bandwidth follows from its channels and tburst",
                                c.name
                            ),
                        ));
                    }
                }
            }
        }
        // Keys in [defaults.memory] must reach some memory of their model.
        if !models.contains(&MemoryModel::Dram) {
            if let Some(key) = dram_keys_set(d) {
                return Err(self.err(
                    format!("defaults.memory.{key}"),
                    format!(
                        "applies only to model = \"dram\", and every memory uses model = \"{}\"; \
                         expected defaults.memory.model = \"dram\" (or model = \"dram\" in a [[memory]])",
                        model_name(default_model)
                    ),
                ));
            }
        }
        let default_bw_set =
            self.raw.get("defaults").and_then(|t| t.get("memory")).and_then(|t| t.get("bandwidth")).is_some();
        if default_bw_set && !models.contains(&MemoryModel::Fixed) {
            return Err(self.err(
                "defaults.memory.bandwidth",
                "applies only to model = \"fixed\", and every memory uses model = \"dram\", whose bandwidth \
                 follows from its channels and tburst",
            ));
        }
        let default_queue_set =
            self.raw.get("defaults").and_then(|t| t.get("memory")).and_then(|t| t.get("queue")).is_some();
        for (k, &(_, cfg)) in mem_nodes.iter().enumerate() {
            if models[k] == MemoryModel::Dram {
                let p = self.dram_params(d, cfg.map(|i| (i, &config.memory[i])))?;
                // Unless told otherwise, the endpoint holds what its controller's queues hold: requests
                // are admitted in arrival order, so with fewer slots the writes parked in the write
                // queues fill the endpoint and the reads behind them starve (a DDR5 DIMM's 2 x (32 + 32)
                // against the fixed model's 64 cut a 3:1 read:write mix to a third of its rate).
                let entry_set = cfg.is_some_and(|i| config.memory[i].queue.is_some());
                if !entry_set && !default_queue_set {
                    let holds = p.channels.saturating_mul(p.channel_queue.saturating_add(p.write_queue));
                    memories[k].queue = memories[k].queue.max(holds);
                }
                memories[k].dram = Some(p);
            }
        }
        Ok(())
    }

    /// The DRAM parameters of one memory: its preset with the keys of its
    /// [[memory]] entry, else of [defaults.memory], applied.
    fn dram_params(&self, d: &MemoryParams, c: Option<(usize, &MemoryConfig)>) -> Result<DramParams, ConfigError> {
        // The key path that set `key` (the entry's, else the defaults').
        let path = |key: &str, in_entry: bool| match c {
            Some((i, _)) if in_entry => format!("memory[{i}].{key}"),
            _ => format!("defaults.memory.{key}"),
        };
        macro_rules! get {
            ($k:ident) => {{
                let e = c.and_then(|(_, c)| c.$k.clone());
                let in_entry = e.is_some();
                (e.or(d.$k.clone()), path(stringify!($k), in_entry))
            }};
        }
        let (name, key) = get!(dram);
        let name = name.unwrap_or_else(|| "DDR5-4800".to_string());
        let preset = Preset::find(&name).ok_or_else(|| {
            self.err(&key, format!("{name:?}: unknown DRAM preset; expected one of {}", Preset::names()))
        })?;
        let mut p = preset.params();
        let mut set: Vec<(&'static str, String)> = Vec::new();
        macro_rules! apply {
            ($k:ident, $f:expr) => {{
                let (v, key) = get!($k);
                if let Some(v) = v {
                    set.push((stringify!($k), key));
                    #[allow(clippy::redundant_closure_call)]
                    ($f)(&mut p, v);
                }
            }};
        }
        apply!(channels, |p: &mut DramParams, v| p.channels = v);
        apply!(ranks, |p: &mut DramParams, v| p.ranks = v);
        apply!(banks, |p: &mut DramParams, v| p.banks = v);
        apply!(channel_queue, |p: &mut DramParams, v| p.channel_queue = v);
        apply!(page, |p: &mut DramParams, v| p.page = match v {
            PagePolicy::Open => Page::Open,
            PagePolicy::Closed => Page::Closed,
        });
        apply!(trcd, |p: &mut DramParams, v: super::units::Duration| p.trcd = v.ps());
        apply!(tcl, |p: &mut DramParams, v: super::units::Duration| p.tcl = v.ps());
        apply!(trp, |p: &mut DramParams, v: super::units::Duration| p.trp = v.ps());
        apply!(tras, |p: &mut DramParams, v: super::units::Duration| p.tras = v.ps());
        apply!(tburst, |p: &mut DramParams, v: super::units::Duration| p.tburst = v.ps());
        apply!(trfc, |p: &mut DramParams, v: super::units::Duration| p.trfc = v.ps());
        apply!(trefi, |p: &mut DramParams, v: super::units::Duration| p.trefi = v.ps());
        apply!(bank_groups, |p: &mut DramParams, v| p.bank_groups = v);
        apply!(write_queue, |p: &mut DramParams, v| p.write_queue = v);
        apply!(write_high, |p: &mut DramParams, v| p.write_high = v);
        apply!(write_low, |p: &mut DramParams, v| p.write_low = v);
        apply!(tck, |p: &mut DramParams, v: super::units::Duration| p.tck = v.ps());
        apply!(tcwl, |p: &mut DramParams, v: super::units::Duration| p.tcwl = v.ps());
        apply!(tccd_s, |p: &mut DramParams, v: super::units::Duration| p.tccd_s = v.ps());
        apply!(tccd_l, |p: &mut DramParams, v: super::units::Duration| p.tccd_l = v.ps());
        apply!(trrd_s, |p: &mut DramParams, v: super::units::Duration| p.trrd_s = v.ps());
        apply!(trrd_l, |p: &mut DramParams, v: super::units::Duration| p.trrd_l = v.ps());
        apply!(tfaw, |p: &mut DramParams, v: super::units::Duration| p.tfaw = v.ps());
        apply!(twr, |p: &mut DramParams, v: super::units::Duration| p.twr = v.ps());
        apply!(twtr_s, |p: &mut DramParams, v: super::units::Duration| p.twtr_s = v.ps());
        apply!(twtr_l, |p: &mut DramParams, v: super::units::Duration| p.twtr_l = v.ps());
        apply!(trtp, |p: &mut DramParams, v: super::units::Duration| p.trtp = v.ps());
        apply!(trtrs, |p: &mut DramParams, v: super::units::Duration| p.trtrs = v.ps());
        apply!(frontend, |p: &mut DramParams, v| p.frontend = v);
        // Watermarks not set follow the write queue as the preset's do: a
        // drain from full to half.
        let is_set = |k: &str| set.iter().any(|(s, _)| *s == k);
        if is_set("write_queue") && !is_set("write_high") {
            p.write_high = p.write_queue;
        }
        if (is_set("write_queue") || is_set("write_high")) && !is_set("write_low") {
            p.write_low = p.write_high / 2;
        }
        let (row, key) = get!(row_size);
        if let Some(row) = row {
            p.row_bytes = u32::try_from(row.bytes())
                .map_err(|_| self.err(&key, format!("{}B: expected at most 4GiB", row.bytes())))?;
            set.push(("row_size", key));
        }
        let (mapping, key) = get!(mapping);
        p.mapping = match mapping {
            Some(m) => parse_mapping(&m).map_err(|e| self.err(&key, e))?,
            None => p.page.default_mapping(),
        };
        p.validate().map_err(|(k, msg)| {
            // Name the key the user set; a bound between two keys (trfc <
            // trefi, tccd_s <= tccd_l, ...) may come from either.
            let partner = match k {
                "trfc" => "trefi",
                "tccd_l" => "tccd_s",
                "trrd_l" => "trrd_s",
                "twtr_l" => "twtr_s",
                "write_high" => "write_queue",
                "write_low" => "write_high",
                "banks" => "bank_groups",
                _ => "",
            };
            let key = set
                .iter()
                .find(|(s, _)| *s == k)
                .or_else(|| set.iter().find(|(s, _)| *s == partner))
                .map(|(_, path)| path.clone())
                .unwrap_or_else(|| path(k, false));
            self.err(key, msg)
        })?;
        Ok(p)
    }

    fn check_name(&self, name: &str, key: &str) -> Result<(), ConfigError> {
        if name.is_empty() || name.chars().any(|c| c.is_whitespace()) {
            return Err(self.err(key, format!("{name:?}: expected a non-empty name without spaces")));
        }
        Ok(())
    }

    fn generate(
        &self,
        t: &TopologyConfig,
        d: &Defaults,
        routing: RoutingAlgorithm,
        topo: &mut Topology,
        reqs: &mut Vec<(NodeId, Option<usize>)>,
        mems: &mut Vec<(NodeId, Option<usize>)>,
    ) -> Result<(), ConfigError> {
        let params = ShapeParams {
            switches: t.switches,
            arity: t.arity,
            depth: t.depth,
            spines: t.spines,
            leaves: t.leaves,
            rows: t.rows,
            cols: t.cols,
        };
        self.check_shape_keys(t)?;
        self.check_generated_size(t, routing)?;
        let shape = generate(t.kind, &params).map_err(|(k, m)| self.err(format!("topology.{k}"), m))?;
        let link = |a, b| Link {
            a,
            b,
            bandwidth: d.link.bandwidth,
            latency: d.link.latency.ps(),
            port_delay: d.link.port_delay.ps(),
            duplex: d.link.duplex,
            turnaround: d.link.turnaround.ps(),
        };
        let sw: Vec<NodeId> = (0..shape.switches)
            .map(|i| topo.add_node(format!("sw{i}"), NodeKind::Switch, d.switch.latency.ps()))
            .collect();
        if matches!(t.kind, TopologyKind::Mesh | TopologyKind::Torus) {
            topo.grid = Some(crate::fabric::topology::Grid {
                rows: t.rows.unwrap_or(1),
                cols: t.cols.unwrap_or(1),
                wrap: t.kind == TopologyKind::Torus,
            });
        }
        for &(a, b) in &shape.edges {
            let bandwidth = t.switch_link_bandwidth.unwrap_or(d.link.bandwidth);
            topo.add_link(Link { bandwidth, ..link(sw[a], sw[b]) });
        }
        let e = &shape.edge_switches;
        let (req_sw, mem_sw): (&[usize], &[usize]) = match t.attach {
            Attach::Interleave => (e, e),
            Attach::Split if e.len() < 2 => {
                return Err(self.err("topology.attach", "\"split\" needs at least two edge switches"))
            }
            Attach::Split => e.split_at(e.len() / 2),
        };
        // Spread evenly: endpoint i of n goes to switch floor(i * k / n) of k.
        let place = |i: usize, n: usize, sws: &[usize]| match t.attach {
            Attach::Interleave => sws[i % sws.len()],
            Attach::Split => sws[i * sws.len() / n.max(1)],
        };
        for i in 0..t.requesters as usize {
            let n = topo.add_node(format!("req{i}"), NodeKind::Requester, 0);
            topo.add_link(link(n, sw[place(i, t.requesters as usize, req_sw)]));
            reqs.push((n, None));
        }
        for i in 0..t.memories as usize {
            let n = topo.add_node(format!("mem{i}"), NodeKind::Memory, 0);
            topo.add_link(link(n, sw[place(i, t.memories as usize, mem_sw)]));
            mems.push((n, None));
        }
        Ok(())
    }

    /// A shape key the chosen kind does not use is an error, like an unknown key.
    fn check_shape_keys(&self, t: &TopologyConfig) -> Result<(), ConfigError> {
        use crate::config::schema::TopologyKind as K;
        let uses: &[&str] = match t.kind {
            K::Chain | K::Ring | K::FullyConnected => &["switches"],
            K::Tree => &["arity", "depth"],
            K::SpineLeaf => &["spines", "leaves"],
            K::Mesh | K::Torus => &["rows", "cols"],
        };
        let given = [
            ("switches", t.switches),
            ("arity", t.arity),
            ("depth", t.depth),
            ("spines", t.spines),
            ("leaves", t.leaves),
            ("rows", t.rows),
            ("cols", t.cols),
        ];
        if let Some((key, _)) = given.iter().find(|(k, v)| v.is_some() && !uses.contains(k)) {
            let kind = serde_json::to_value(t.kind).ok().and_then(|v| v.as_str().map(String::from)).unwrap_or_default();
            return Err(self.err(
                format!("topology.{key}"),
                format!("does not apply to kind = \"{kind}\"; a {kind} topology takes {}", uses.join(" and ")),
            ));
        }
        Ok(())
    }

    /// Refuse, before generating anything, a topology whose tables would
    /// not fit in memory or take too long to build; name the key that
    /// makes it large.
    fn check_generated_size(&self, t: &TopologyConfig, routing: RoutingAlgorithm) -> Result<(), ConfigError> {
        use crate::config::schema::TopologyKind as K;
        let g = |v: Option<u32>| v.unwrap_or(1) as u64;
        // (switches, switch-to-switch links, edge switches, sum of squared switch degrees, key)
        let (switches, links, edge, deg_sq, key) = match t.kind {
            K::Chain | K::Ring => {
                let n = g(t.switches);
                (n, n, n, 4 * n, "switches")
            }
            K::FullyConnected => {
                let s = g(t.switches);
                (s, s * s.saturating_sub(1) / 2, s, s * s.saturating_sub(1) * s.saturating_sub(1), "switches")
            }
            K::Tree => {
                let (a, d) = (g(t.arity).min(4097), g(t.depth).min(4097));
                let mut total = 1u64;
                let mut level = 1u64;
                for _ in 0..d {
                    level = level.saturating_mul(a);
                    total = total.saturating_add(level);
                    if total > 4097 {
                        return Ok(()); // the generator refuses it, naming depth
                    }
                }
                (total, total - 1, level, total * (a + 1) * (a + 1), "depth")
            }
            K::SpineLeaf => {
                let (s, l) = (g(t.spines), g(t.leaves));
                (s + l, s * l, l, s * l * l + l * s * s, if s > l { "spines" } else { "leaves" })
            }
            K::Mesh | K::Torus => {
                let (r, c) = (g(t.rows), g(t.cols));
                (r * c, 2 * r * c, r * c, 16 * r * c, if r >= c { "rows" } else { "cols" })
            }
        };
        let (req, mem) = (t.requesters as u64, t.memories as u64);
        let key = if req > switches && req >= mem {
            "requesters"
        } else if mem > switches {
            "memories"
        } else {
            key
        };
        let shape = crate::fabric::routing::Shape {
            switches,
            switch_ports: 2 * links + req + mem,
            switch_degree_sq: deg_sq,
            groups: edge.min(req + mem),
            multi_port_endpoints: 0,
            hops: (switches + 2).min(64),
        };
        let kind = serde_json::to_value(t.kind).ok().and_then(|v| v.as_str().map(String::from)).unwrap_or_default();
        let what =
            format!("a generated {kind} topology: {} nodes and {} links", switches + req + mem, links + req + mem);
        crate::config::limits::check_system(routing, &shape, links + req + mem, req, 0, &what)
            .map_err(|m| self.err(format!("topology.{key}"), m))
    }

    /// Dimension-order routing needs a generated mesh or torus, untouched
    /// by explicit links, and takes no hop-indexed VCs.
    fn check_dor(&self, config: &Config, topo: &Topology) -> Result<(), ConfigError> {
        if config.fabric.routing != RoutingAlgorithm::Dor {
            return Ok(());
        }
        let kind = config.topology.as_ref().map(|t| t.kind);
        if !matches!(kind, Some(TopologyKind::Mesh | TopologyKind::Torus)) || topo.grid.is_none() {
            return Err(self.err(
                "fabric.routing",
                "\"dor\": dimension-order routing needs a generated mesh or torus ([topology] kind = \"mesh\" or \"torus\")",
            ));
        }
        if !config.link.is_empty() {
            return Err(self.err(
                "link",
                "routing = \"dor\" routes on the generated grid's coordinates; expected no [[link]] entries",
            ));
        }
        if config.fabric.deadlock_avoidance == DeadlockAvoidance::HopVcs {
            return Err(self.err(
                "fabric.deadlock_avoidance",
                "\"hop_vcs\": dimension-order routing uses dateline VCs on a torus (and needs none on a mesh); \
                 expected \"auto\" or \"none\"",
            ));
        }
        Ok(())
    }

    /// The workload's pattern, and its kernel built from its
    /// `[workload.<pattern>]` table when the pattern is a kernel's.
    fn pattern(
        &self,
        w: &WorkloadConfig,
        prefix: &str,
        tables: Vec<(String, toml::Table)>,
    ) -> Result<(Pattern, Option<BuiltKernel>), ConfigError> {
        if let Some((name, _)) = tables.iter().find(|(n, _)| *n != w.pattern) {
            return Err(self.err(
                format!("{prefix}.{name}"),
                format!("applies to pattern = {name:?} only; the pattern is {:?}", w.pattern),
            ));
        }
        if let Some(p) = Pattern::parse(&w.pattern) {
            return Ok((p, None));
        }
        let Some(entry) = kernels::find(&w.pattern) else {
            let mut names: Vec<&str> = Pattern::NAMES.to_vec();
            names.extend(kernels::KERNELS.iter().map(|k| k.name()));
            let close = crate::error::did_you_mean_name(&w.pattern, names.iter().copied());
            return Err(self.err(
                format!("{prefix}.pattern"),
                format!("unknown pattern {:?};{close} expected {}", w.pattern, crate::error::or_list(&names)),
            ));
        };
        let table = tables.into_iter().next().map(|(_, t)| t);
        let at = kernels::Workload { line: w.line.bytes(), footprint: w.footprint.bytes() };
        Ok((Pattern::Kernel, Some(entry.build(table, self.source, prefix, self.overrides, &at)?)))
    }

    /// The global `[workload]` table with a requester's own keys laid over it.
    fn workload_table(&self, own: Option<&toml::Table>, cfg: Option<usize>) -> (toml::Table, String) {
        let mut t = self.raw.get("workload").and_then(|v| v.as_table()).cloned().unwrap_or_default();
        match (own, cfg) {
            (Some(own), Some(i)) => {
                for (k, v) in own {
                    // a kernel's table merges key by key, as [workload] itself does
                    match (t.get_mut(k), v) {
                        (Some(toml::Value::Table(base)), toml::Value::Table(mine)) if kernels::find(k).is_some() => {
                            base.extend(mine.clone());
                        }
                        _ => {
                            t.insert(k.clone(), v.clone());
                        }
                    }
                }
                (t, format!("requester[{i}].workload"))
            }
            _ => (t, "workload".to_string()),
        }
    }

    fn workload(
        &self,
        w: &WorkloadConfig,
        prefix: &str,
        mem_names: &[String],
        kernels: Vec<(String, toml::Table)>,
    ) -> Result<(WorkloadSpec, Option<serde_json::Value>), ConfigError> {
        let k = |s: &str| format!("{prefix}.{s}");
        let frac = |v: f64, key: &str, lo_open: bool| -> Result<(), ConfigError> {
            let ok = v.is_finite() && v <= 1.0 && if lo_open { v > 0.0 } else { v >= 0.0 };
            if ok {
                Ok(())
            } else {
                Err(self.err(k(key), format!("{v}: expected a fraction in {}0, 1]", if lo_open { "(" } else { "[" })))
            }
        };
        frac(w.read_fraction, "read_fraction", false)?;
        if let Some(d) = w.dependent {
            frac(d, "dependent", false)?;
        }
        if let Some(n) = w.instructions {
            if n > 1 << 32 {
                return Err(self.err(k("instructions"), format!("{n}: expected 0 to 4294967296 instructions")));
            }
        }
        frac(w.hot_fraction, "hot_fraction", true)?;
        frac(w.hot_probability, "hot_probability", false)?;
        if !(w.header_overhead.is_finite() && w.header_overhead >= 0.0 && w.header_overhead <= 16.0) {
            return Err(self.err(
                k("header_overhead"),
                format!("{}: expected a ratio of header to payload length in [0, 16]", w.header_overhead),
            ));
        }
        if w.line.bytes() == 0 || w.line.bytes() > 1 << 20 {
            return Err(self.err(k("line"), format!("{}: expected a size between 1B and 1MiB", w.line)));
        }
        if w.data_header.bytes() > 1 << 20 {
            return Err(self.err(k("data_header"), format!("{}: expected at most 1MiB", w.data_header)));
        }
        if w.interleave.bytes() == 0 {
            return Err(self.err(k("interleave"), "0B: expected a positive size"));
        }
        if w.footprint.bytes() < w.line.bytes() {
            return Err(self.err(k("footprint"), format!("{}: expected at least one line ({})", w.footprint, w.line)));
        }
        let (pattern, kernel) = self.pattern(w, prefix, kernels)?;
        let (kernel, keys) = kernel.map_or((None, None), |(k, v)| (Some(k), Some(v)));
        if pattern != Pattern::Trace && w.requests == 0 {
            return Err(self.err(k("requests"), "0: expected at least 1"));
        }
        if w.window == 0 {
            return Err(self.err(k("window"), "0: expected at least 1 outstanding request"));
        }
        let line = w.line.bytes() as u32;
        let interval = match (w.injection, w.interval, w.rate) {
            (Injection::Open, Some(_), Some(_)) => {
                return Err(self.err(k("rate"), "give either interval or rate for open-loop injection, not both"))
            }
            (Injection::Open, Some(i), None) if i.ps() == 0 => {
                return Err(self.err(k("interval"), "0ns: expected a positive time"))
            }
            (Injection::Open, Some(i), None) => i.ps(),
            (Injection::Open, None, Some(r)) if r.is_infinite() => {
                return Err(self.err(k("rate"), "inf: expected a finite rate"))
            }
            (Injection::Open, None, Some(r)) => r.serialize(line as u64).max(1),
            (Injection::Open, None, None) if pattern == Pattern::Trace => 0,
            (Injection::Open, None, None) => {
                return Err(self.err(
                    k("interval"),
                    "missing: open-loop injection needs interval (like '5ns') or rate (like '10GB/s')",
                ))
            }
            (Injection::Closed, i, r) => {
                if i.is_some() || r.is_some() {
                    let key = if i.is_some() { "interval" } else { "rate" };
                    return Err(
                        self.err(k(key), "only used with injection = \"open\"; closed-loop injection uses window")
                    );
                }
                0
            }
        };
        let targets: Vec<u32> = match &w.targets {
            None => (0..mem_names.len() as u32).collect(),
            Some(list) if list.is_empty() => {
                return Err(self.err(k("targets"), "[]: expected at least one memory name"))
            }
            Some(list) => list
                .iter()
                .map(|n| {
                    mem_names.iter().position(|m| m == n).map(|i| i as u32).ok_or_else(|| {
                        self.err(
                            k("targets"),
                            format!("{n:?} is not a memory; expected names from {}", mem_names.join(", ")),
                        )
                    })
                })
                .collect::<Result<_, _>>()?,
        };
        let spec = WorkloadSpec {
            pattern,
            requests: w.requests,
            warmup: w.warmup,
            read_fraction: w.read_fraction,
            line,
            header_bytes: (w.header_overhead * line as f64).round() as u32,
            data_header: w.data_header.bytes() as u32,
            injection: w.injection,
            window: w.window,
            interval,
            arrival: w.arrival,
            footprint: w.footprint.bytes(),
            interleave: w.interleave.bytes(),
            hot_fraction: w.hot_fraction,
            hot_probability: w.hot_probability,
            targets,
            trace: None,
            kernel,
            posted_writes: w.posted_writes,
            instructions: w.instructions.unwrap_or(0),
            dependent: w.dependent.unwrap_or(0.0),
        };
        Ok((spec, keys))
    }
}

/// A kernel and its keys as the configuration records them.
type BuiltKernel = (Arc<dyn Kernel>, serde_json::Value);

/// The first DRAM key set in a `[defaults.memory]` or `[[memory]]` table.
fn dram_keys_set<T: Serialize>(t: &T) -> Option<&'static str> {
    // The DRAM keys serialize only when set.
    let v = serde_json::to_value(t).expect("memory keys serialize");
    DRAM_KEYS.iter().copied().find(|k| v.get(k).is_some())
}

/// A preset's front end and, for protocols whose core agent is a cache,
/// its L1 and L2 (lru; the line is the protocol's). The front end's memory
/// model and its store buffer are the driver's (`t`, where an absent
/// `store_buffer` key already took the preset's).
fn preset_spec(p: &CorePreset, t: &Timing, caches: bool) -> CoreSpec {
    use crate::agents::cache::{CacheGeometry, VictimPolicy};
    let base = core_base(t).front;
    let front = crate::agents::core::Params { model: base.model, store_buffer: base.store_buffer, ..p.core };
    let level = |l: crate::agents::core::presets::Level, mshrs: u32| {
        CacheGeometry::new(l.size, u64::from(t.line_bytes), l.ways).ok().map(|geometry| LevelSpec {
            geometry,
            policy: VictimPolicy::Lru,
            latency: l.latency(front.cycle),
            mshrs,
        })
    };
    let (l1, l2) = if caches { (level(p.l1, front.fill_buffers), level(p.l2, p.l2.mshrs)) } else { (None, None) };
    CoreSpec { front, l1, l2: l1.and(l2) }
}

/// The protocol's caches and the cores' private levels whose geometry
/// looks like a slip (`agents::cache::geometry_warnings`).
fn cache_warnings(p: &ProtocolSpec) -> Vec<String> {
    use crate::agents::cache::geometry_warnings;
    let mut out = Vec::new();
    if let Some(c) = &p.cache {
        out.extend(geometry_warnings(&c.geometry, "protocol.cache"));
    }
    if let Some(core) = &p.timing.core {
        for (level, key) in [(core.l1, "protocol.core.l1"), (core.l2, "protocol.core.l2")] {
            if let Some(l) = level {
                out.extend(geometry_warnings(&l.geometry, key));
            }
        }
    }
    out
}

/// The families whose workload-driven cores are the shared core front end's.
fn front_ends() -> Vec<&'static str> {
    crate::registry::timed().filter(|f| f.runs().is_some_and(|r| r.front_end)).map(|f| f.name()).collect()
}
