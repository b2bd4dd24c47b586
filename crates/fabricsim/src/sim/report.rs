//! Rendering a run's results: the JSON summary, CSV tables and a terminal
//! table. Output depends only on the results (never on wall-clock time,
//! except the summary's `wall_s`), so the same run gives the same bytes.

use std::fmt::Write;

use serde_json::json;

use super::{Outcome, RunResult};
use crate::engine::NS;
use crate::stats::Histogram;

fn ns(ps: u64) -> f64 {
    ps as f64 / NS as f64
}

fn round(v: f64, digits: i32) -> f64 {
    let f = 10f64.powi(digits);
    (v * f).round() / f
}

fn lat_json(h: &Histogram) -> serde_json::Value {
    if h.count == 0 {
        return json!({"count": 0});
    }
    json!({
        "count": h.count,
        "mean": round(h.mean() / NS as f64, 3),
        "min": ns(h.min),
        "p50": ns(h.quantile(0.50)),
        "p90": ns(h.quantile(0.90)),
        "p99": ns(h.quantile(0.99)),
        "max": ns(h.max),
    })
}

impl RunResult {
    pub fn outcome_name(&self) -> &'static str {
        match self.outcome {
            Outcome::Completed => "completed",
            Outcome::TimeLimit => "time_limit",
            Outcome::Deadlock => "deadlock",
            Outcome::Interrupted => "interrupted",
            Outcome::ProtocolError => "protocol_error",
        }
    }

    pub fn measured_time(&self) -> u64 {
        self.window_end.saturating_sub(self.window_start)
    }

    pub fn all_latency(&self) -> Histogram {
        let mut h = Histogram::default();
        for r in &self.requesters {
            h.merge(&r.latency);
        }
        h
    }

    /// Measured payload bytes per second over the measurement window, in GB/s.
    pub fn throughput_gbps(&self) -> f64 {
        let bytes: u64 = self.requesters.iter().map(|r| r.measured_bytes).sum();
        let t = self.measured_time();
        if t == 0 {
            0.0
        } else {
            bytes as f64 / (t as f64 / 1e12) / 1e9
        }
    }

    pub fn summary_json(&self, version: &str) -> String {
        let issued: u64 = self.requesters.iter().map(|r| r.issued).sum();
        let completed: u64 = self.requesters.iter().map(|r| r.completed).sum();
        let mut q = Histogram::default();
        for r in &self.requesters {
            q.merge(&r.queueing);
        }
        let mut v = json!({
            "fabricsim_version": version,
            "config_name": self.name,
            "seed": self.seed,
            "outcome": self.outcome_name(),
            "deadlock": self.outcome == Outcome::Deadlock,
            "sim_time_ps": self.sim_time,
            "measured_time_ps": self.measured_time(),
            "events": self.events,
            "wall_s": round(self.wall_s, 4),
            "requests": {
                "issued": issued,
                "completed": completed,
                "in_flight": issued - completed,
                "measured": self.requesters.iter().map(|r| r.measured).sum::<u64>(),
            },
            "packets_in_flight": self.in_flight_packets,
            "throughput_GBps": round(self.throughput_gbps(), 6),
            "latency_ns": lat_json(&self.all_latency()),
            "read_latency_ns": lat_json(&self.read_latency),
            "write_latency_ns": lat_json(&self.write_latency),
            "queueing_ns": lat_json(&q),
            "routing": {
                "algorithm": self.routing,
                "spread": self.spread,
                "vc_levels": self.vc_levels,
                "cdg_acyclic": self.cdg_acyclic,
            },
            "memories": self.memories.iter().map(|m| self.memory_json(m)).collect::<Vec<_>>(),
            "warnings": self.warnings,
        });
        for (kind, h) in &self.op_latency {
            // Only runs with such operations have the key: other outputs stay as they were.
            v[format!("{kind}_latency_ns")] = lat_json(h);
        }
        if !self.by_hops.is_empty() {
            v["latency_by_hops"] = self.by_hops.iter().map(Self::hop_json).collect();
        }
        if !self.protocol_stats.is_empty() {
            // Only protocol runs have it: request/response outputs stay as they were.
            let m: serde_json::Map<String, serde_json::Value> =
                self.protocol_stats.iter().map(|(k, x)| (k.clone(), json!(round(*x, 6)))).collect();
            v["protocol"] = serde_json::Value::Object(m);
        }
        if !self.caches.is_empty() {
            // Only runs with [protocol.core] levels or a protocol cache that counts
            // (MSI, MESI, DCOH with a capacity) have it: other outputs stay as they were.
            v["caches"] = self.caches.iter().map(Self::cache_json).collect();
        }
        if let Some(p) = &self.profile {
            // Only when asked (--profile): other outputs stay as they were.
            v["profile"] = p.json();
        }
        serde_json::to_string_pretty(&v).expect("summary serializes")
    }

    fn cache_json(c: &crate::sim::CacheResult) -> serde_json::Value {
        let st = &c.stats;
        let mut v = json!({
            "core": c.core,
            "level": c.level,
            "hits": st.hits,
            "misses": st.misses(),
        });
        // a counter the row does not have is absent (as in caches.csv: empty)
        for (k, x) in cache_columns(st) {
            if c.has(k) {
                v[k] = x;
            }
        }
        v
    }

    /// One row per core and cache (`[protocol.core]` levels, then the
    /// protocol's cache); a counter a row does not have is empty
    /// ([`crate::sim::CacheResult::has`]).
    pub fn caches_csv(&self) -> String {
        let mut s = String::from("core,level,hits,misses");
        for (k, _) in cache_columns(&Default::default()) {
            s.push(',');
            s.push_str(k);
        }
        s.push('\n');
        for c in &self.caches {
            let st = &c.stats;
            let _ = write!(s, "{},{},{},{}", c.core, c.level, st.hits, st.misses());
            for (k, x) in cache_columns(st) {
                s.push(',');
                if c.has(k) {
                    let _ = write!(s, "{x}");
                }
            }
            s.push('\n');
        }
        s
    }

    fn hop_json(c: &crate::sim::system::HopClass) -> serde_json::Value {
        let n = c.latency.count.max(1) as f64 * NS as f64;
        json!({
            "hops": c.hops,
            "latency_ns": lat_json(&c.latency),
            "fabric_queueing_ns": round(c.fabric_wait_ps as f64 / n, 3),
            "memory_queueing_ns": round(c.memory_wait_ps as f64 / n, 3),
        })
    }

    /// One row per hop count of the measured requests: latency, and its
    /// parts spent in fabric queues, in memory queues, and neither (the
    /// unloaded path: delays, serialization, the media's own time).
    pub fn hops_csv(&self) -> String {
        let mut s = String::from(
            "hops,requests,mean_ns,p50_ns,p99_ns,max_ns,fabric_queueing_ns,memory_queueing_ns,unqueued_ns\n",
        );
        for c in &self.by_hops {
            let n = c.latency.count.max(1) as f64 * NS as f64;
            let (fq, mq) = (c.fabric_wait_ps as f64 / n, c.memory_wait_ps as f64 / n);
            let mean = c.latency.mean() / NS as f64;
            let _ = writeln!(
                s,
                "{},{},{},{},{},{},{},{},{}",
                c.hops,
                c.latency.count,
                round(mean, 3),
                ns(c.latency.quantile(0.5)),
                ns(c.latency.quantile(0.99)),
                ns(c.latency.max),
                round(fq, 3),
                round(mq, 3),
                round(mean - fq - mq, 3),
            );
        }
        s
    }

    /// One row per link direction.
    pub fn links_csv(&self) -> String {
        let t = self.measured_time().max(1) as f64;
        let mut s = String::from(
            "link,from,to,duplex,bandwidth_GBps,packets,bytes,payload_bytes,busy_ns,utilization,efficiency,turnaround_ns,mean_wait_ns,throughput_GBps\n",
        );
        for (l, from, to, bw, st) in &self.links {
            let duplex = if self.half_duplex.get(*l).copied().unwrap_or(false) { "half" } else { "full" };
            let eff = if st.busy_ps == 0 { 0.0 } else { st.payload_ps as f64 / st.busy_ps as f64 };
            let wait = if st.packets == 0 { 0.0 } else { st.wait_ps as f64 / st.packets as f64 / NS as f64 };
            let _ = writeln!(
                s,
                "{l},{from},{to},{duplex},{},{},{},{},{},{},{},{},{},{}",
                round(*bw, 6),
                st.packets,
                st.bytes,
                st.payload_bytes,
                round(ns(st.busy_ps), 3),
                round(st.busy_ps as f64 / t, 6),
                round(eff, 6),
                round(ns(st.turnaround_ps), 3),
                round(wait, 4),
                round(st.payload_bytes as f64 / (t / 1e12) / 1e9, 6),
            );
        }
        s
    }

    /// Latency histogram buckets, overall and per operation.
    pub fn latency_csv(&self) -> String {
        let mut s = String::from("scope,lo_ns,hi_ns,count\n");
        for (scope, h) in [("all", &self.all_latency()), ("read", &self.read_latency), ("write", &self.write_latency)] {
            for (lo, hi, c) in h.buckets() {
                let _ = writeln!(s, "{scope},{},{},{c}", ns(lo), ns(hi));
            }
        }
        s
    }

    pub fn requesters_csv(&self) -> String {
        let t = self.measured_time().max(1) as f64;
        let mut s = String::from(
            "requester,issued,completed,measured,throughput_GBps,mean_ns,p50_ns,p99_ns,max_ns,mean_queueing_ns,finished_ns\n",
        );
        for r in &self.requesters {
            let _ = writeln!(
                s,
                "{},{},{},{},{},{},{},{},{},{},{}",
                r.name,
                r.issued,
                r.completed,
                r.measured,
                round(r.measured_bytes as f64 / (t / 1e12) / 1e9, 6),
                round(r.latency.mean() / NS as f64, 3),
                ns(r.latency.quantile(0.5)),
                ns(r.latency.quantile(0.99)),
                ns(if r.latency.count == 0 { 0 } else { r.latency.max }),
                round(r.queueing.mean() / NS as f64, 3),
                ns(r.finished),
            );
        }
        s
    }

    /// Busy fraction of a memory's media (a DRAM: of its channels' data buses).
    fn utilization(m: &crate::sim::system::MemoryResult, t: u64) -> f64 {
        let channels = m.dram.map_or(1, |d| d.channels.max(1)) as f64;
        m.busy_ps as f64 / channels / t.max(1) as f64
    }

    fn memory_json(&self, m: &crate::sim::system::MemoryResult) -> serde_json::Value {
        let mut v = json!({
            "name": m.name,
            "served": m.served,
            "utilization": round(Self::utilization(m, self.sim_time), 6),
        });
        if let Some(d) = &m.dram {
            v["dram"] = json!({
                "accesses": d.accesses,
                "row_hits": d.row_hits,
                "row_empty": d.row_empty,
                "row_conflicts": d.row_conflicts,
                "row_hit_rate": round(d.row_hit_rate(), 6),
                "activates": d.activates,
                "precharges": d.precharges,
                "refreshes": d.refreshes,
            });
        }
        v
    }

    /// One row per memory (a protocol's homes: their memory accesses); the
    /// DRAM columns are empty for the fixed model.
    pub fn memories_csv(&self) -> String {
        let mut s = String::from(
            "memory,served,utilization,accesses,row_hits,row_empty,row_conflicts,row_hit_rate,activates,precharges,refreshes\n",
        );
        for m in &self.memories {
            let util = round(Self::utilization(m, self.sim_time), 6);
            let _ = write!(s, "{},{},{util}", m.name, m.served);
            match &m.dram {
                Some(d) => {
                    let _ = writeln!(
                        s,
                        ",{},{},{},{},{},{},{},{}",
                        d.accesses,
                        d.row_hits,
                        d.row_empty,
                        d.row_conflicts,
                        round(d.row_hit_rate(), 6),
                        d.activates,
                        d.precharges,
                        d.refreshes
                    );
                }
                None => s.push_str(",,,,,,,,\n"),
            }
        }
        s
    }

    pub fn classes_csv(&self) -> String {
        let mut s = String::from("class,packets,bytes\n");
        for (c, p, b) in &self.class_packets {
            let _ = writeln!(s, "{c},{p},{b}");
        }
        s
    }

    pub fn tables(&self) -> Vec<(&'static str, String)> {
        let mut t = vec![
            ("links", self.links_csv()),
            ("latency", self.latency_csv()),
            ("requesters", self.requesters_csv()),
            ("classes", self.classes_csv()),
            ("memories", self.memories_csv()),
        ];
        // Request/response runs only: protocol outputs stay as they were.
        if !self.by_hops.is_empty() {
            t.push(("hops", self.hops_csv()));
        }
        // Runs with [protocol.core] levels or a counting protocol cache only.
        if !self.caches.is_empty() {
            t.push(("caches", self.caches_csv()));
        }
        t
    }

    /// A readable summary for a terminal.
    pub fn text(&self) -> String {
        let mut s = String::new();
        let h = self.all_latency();
        let issued: u64 = self.requesters.iter().map(|r| r.issued).sum();
        let completed: u64 = self.requesters.iter().map(|r| r.completed).sum();
        let _ = writeln!(s, "{} (seed {}): {}", self.name, self.seed, self.outcome_name());
        let _ = writeln!(
            s,
            "  simulated {:.3} us, measured {:.3} us, {} events in {:.3} s ({:.1} M events/s)",
            self.sim_time as f64 / 1e6,
            self.measured_time() as f64 / 1e6,
            self.events,
            self.wall_s,
            self.events as f64 / self.wall_s.max(1e-9) / 1e6
        );
        let _ = writeln!(s, "  requests {completed}/{issued} completed, throughput {:.3} GB/s", self.throughput_gbps());
        if h.count > 0 {
            let _ = writeln!(
                s,
                "  latency ns: mean {:.1}  p50 {:.1}  p90 {:.1}  p99 {:.1}  max {:.1}",
                h.mean() / NS as f64,
                ns(h.quantile(0.5)),
                ns(h.quantile(0.9)),
                ns(h.quantile(0.99)),
                ns(h.max)
            );
        }
        let _ = writeln!(s);
        let _ = writeln!(
            s,
            "  {:<12} {:>9} {:>9} {:>10} {:>10} {:>10}",
            "requester", "completed", "GB/s", "mean ns", "p50 ns", "p99 ns"
        );
        let t = self.measured_time().max(1) as f64;
        for r in &self.requesters {
            let _ = writeln!(
                s,
                "  {:<12} {:>9} {:>9.3} {:>10.1} {:>10.1} {:>10.1}",
                r.name,
                r.completed,
                r.measured_bytes as f64 / (t / 1e12) / 1e9,
                r.latency.mean() / NS as f64,
                ns(r.latency.quantile(0.5)),
                ns(r.latency.quantile(0.99))
            );
        }
        let _ = writeln!(s);
        let _ =
            writeln!(s, "  {:<24} {:>10} {:>8} {:>8} {:>10}", "link direction", "GB/s cap", "util", "effic", "wait ns");
        let mut busiest: Vec<_> = self.links.iter().collect();
        busiest.sort_by(|a, b| b.4.busy_ps.cmp(&a.4.busy_ps).then(a.0.cmp(&b.0)));
        for (_, from, to, bw, st) in busiest.iter().take(8) {
            let eff = if st.busy_ps == 0 { 0.0 } else { st.payload_ps as f64 / st.busy_ps as f64 };
            let wait = if st.packets == 0 { 0.0 } else { st.wait_ps as f64 / st.packets as f64 / NS as f64 };
            let _ = writeln!(
                s,
                "  {:<24} {:>10.2} {:>8.3} {:>8.3} {:>10.2}",
                format!("{from}->{to}"),
                bw,
                st.busy_ps as f64 / t,
                eff,
                wait
            );
        }
        if self.links.len() > 8 {
            // (the terminal does not know whether the tables are written)
            let _ = writeln!(s, "  ... {} more link directions", self.links.len() - 8);
        }
        if !self.caches.is_empty() {
            let _ = writeln!(s);
            let _ = writeln!(
                s,
                "  {:<12} {:>12} {:>8} {:>10} {:>10} {:>10} {:>10} {:>11} {:>9} {:>8}",
                "cache",
                "accesses",
                "hit %",
                "capacity",
                "coherence",
                "evictions",
                "writebacks",
                "mshr stalls",
                "ns/stall",
                "late"
            );
            // per level, summed over the cores, in the order the cores report them
            let mut levels: Vec<&'static str> = Vec::new();
            for c in &self.caches {
                if !levels.contains(&c.level) {
                    levels.push(c.level);
                }
            }
            for level in levels {
                let rows = || self.caches.iter().filter(|c| c.level == level);
                let mut sum = super::system::CacheStats::default();
                for c in rows() {
                    sum += c.stats;
                }
                let accesses = sum.accesses();
                // a counter the level does not have: "-" (empty in caches.csv)
                let col = |k: &str, n: String| if rows().any(|c| c.has(k)) { n } else { "-".to_string() };
                // the mean wait of an access that waited for the level's entries
                let stall = sum.mshr_stall_ps as f64 / sum.mshr_stalls.max(1) as f64 / NS as f64;
                let _ = writeln!(
                    s,
                    "  {:<12} {:>12} {:>8.2} {:>10} {:>10} {:>10} {:>10} {:>11} {:>9} {:>8}",
                    level,
                    accesses,
                    100.0 * sum.hits as f64 / accesses.max(1) as f64,
                    col("capacity_misses", sum.capacity.to_string()),
                    col("coherence_misses", sum.coherence.to_string()),
                    col("evictions", sum.evictions.to_string()),
                    col("writebacks", sum.writebacks.to_string()),
                    col("mshr_stalls", sum.mshr_stalls.to_string()),
                    col("mshr_stall_ns", format!("{stall:.1}")),
                    col("late_overruns", sum.late_overruns.to_string())
                );
            }
        }
        if let Some(p) = &self.profile {
            let _ = writeln!(s);
            s.push_str(&p.text());
        }
        for w in &self.warnings {
            let _ = writeln!(s, "  warning: {w}");
        }
        s
    }
}

/// A cache row's counters after its hits and misses, in caches.csv's order.
fn cache_columns(st: &crate::sim::CacheStats) -> [(&'static str, serde_json::Value); 7] {
    [
        ("capacity_misses", json!(st.capacity)),
        ("coherence_misses", json!(st.coherence)),
        ("evictions", json!(st.evictions)),
        ("writebacks", json!(st.writebacks)),
        ("mshr_stalls", json!(st.mshr_stalls)),
        ("mshr_stall_ns", json!(round(st.mshr_stall_ps as f64 / NS as f64, 3))),
        ("late_overruns", json!(st.late_overruns)),
    ]
}
