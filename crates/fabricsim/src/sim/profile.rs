//! `--profile`: where a run's wall time goes. Both event loops count the
//! events they pop by kind (deterministic) and, with a cycle counter,
//! charge the time between two switch points to the part of the simulator
//! running then (not deterministic: wall time).
//!
//! Off, it costs nothing measurable: each event loop tests a local bool
//! per event and each switch point inside a handler one bool of the
//! engine's state (branches always predicted); the work when on is out of
//! line, so the handlers' code and what the compiler inlines into them
//! stay as they were (a loop generic over a `const bool` did not: its two
//! copies changed the inlining and cost 3 % more instructions).
//!
//! The request reaches the engines through a thread-local set around the
//! run ([`requested`], [`with`]), not a parameter: protocol families build
//! and run their engine through the registry's `Family::run`, whose
//! signature is shared by every family.

use std::fmt::Write;

use serde_json::json;

/// A part of the simulator that wall time is charged to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Part {
    /// Links, switches, routing, credits (`fabric/network.rs`).
    Fabric,
    /// Protocol handlers and actions (their own cache lookups included:
    /// they are inside the protocol's code); in request/response runs, the
    /// memory endpoints' handling of requests.
    Protocol,
    /// The private levels of workload-driven cores (`sim/levels.rs`).
    Caches,
    /// DRAM timing (`agents/memory/dram.rs` via `sim/home_memory.rs`);
    /// fixed-latency memories cost none.
    Dram,
    /// Workload generators, the core front end and the engine's bookkeeping.
    Driver,
    /// Popping events and the loop itself (and the profiler's own clock reads).
    Queue,
}

impl Part {
    pub const ALL: [Part; 6] = [Part::Fabric, Part::Protocol, Part::Caches, Part::Dram, Part::Driver, Part::Queue];

    pub fn name(self) -> &'static str {
        match self {
            Part::Fabric => "fabric",
            Part::Protocol => "protocol",
            Part::Caches => "caches",
            Part::Dram => "dram",
            Part::Driver => "driver",
            Part::Queue => "queue",
        }
    }
}

/// A cheap clock: the time-stamp counter where there is one (a few ns per
/// read; only ratios of its ticks are used), else the monotonic clock.
#[inline(always)]
fn ticks() -> u64 {
    #[cfg(target_arch = "x86_64")]
    {
        // SAFETY: rdtsc has no preconditions on x86_64.
        #[allow(unused_unsafe)]
        unsafe {
            std::arch::x86_64::_rdtsc()
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        use std::sync::OnceLock;
        static START: OnceLock<std::time::Instant> = OnceLock::new();
        START.get_or_init(std::time::Instant::now).elapsed().as_nanos() as u64
    }
}

/// The profiler an engine holds: event counts by kind index and ticks by part.
pub struct Profiler {
    pub on: bool,
    part: Part,
    last: u64,
    ticks: [u64; Part::ALL.len()],
    counts: Vec<u64>,
}

impl Profiler {
    /// `kinds`: how many event kinds the engine has.
    pub fn new(on: bool, kinds: usize) -> Self {
        let counts = if on { vec![0; kinds] } else { Vec::new() };
        Profiler { on, part: Part::Queue, last: if on { ticks() } else { 0 }, ticks: [0; Part::ALL.len()], counts }
    }

    /// From now on charge time to `to`; returns the part charged until now
    /// (to switch back to). Off: does nothing.
    #[inline(always)]
    pub fn enter(&mut self, to: Part) -> Part {
        if !self.on {
            return to;
        }
        self.switch(to)
    }

    #[inline(never)]
    fn switch(&mut self, to: Part) -> Part {
        let now = ticks();
        self.ticks[self.part as usize] += now.wrapping_sub(self.last);
        self.last = now;
        std::mem::replace(&mut self.part, to)
    }

    /// An event of kind `kind` was popped; its handler starts in `part`
    /// (called only when on).
    #[inline(never)]
    pub fn event(&mut self, kind: usize, part: Part) {
        self.counts[kind] += 1;
        self.switch(part);
    }

    /// The profile of the run: `names` the engine's event kinds (by index),
    /// `wall_s` the event loop's wall time.
    pub fn finish(mut self, engine: &'static str, names: &[&'static str], wall_s: f64) -> Option<Profile> {
        if !self.on {
            return None;
        }
        self.enter(Part::Queue);
        let total = self.ticks.iter().sum::<u64>().max(1) as f64;
        Some(Profile {
            engine,
            events: names.iter().copied().zip(self.counts.iter().copied()).collect(),
            wall_s,
            shares: Part::ALL.iter().map(|&p| (p.name(), self.ticks[p as usize] as f64 / total)).collect(),
        })
    }
}

/// What `--profile` reports of a run.
#[derive(Debug, Clone, PartialEq)]
pub struct Profile {
    /// `protocol` (the generic timing engine) or `request_response`.
    pub engine: &'static str,
    /// Events popped, by kind, every kind of the engine (deterministic;
    /// they sum to the run's `events`).
    pub events: Vec<(&'static str, u64)>,
    /// Wall time of the event loop.
    pub wall_s: f64,
    /// Fraction of the event loop's wall time in each part (sum 1).
    pub shares: Vec<(&'static str, f64)>,
}

impl Profile {
    pub fn total_events(&self) -> u64 {
        self.events.iter().map(|e| e.1).sum()
    }

    pub fn events_per_s(&self) -> f64 {
        self.total_events() as f64 / self.wall_s.max(1e-9)
    }

    /// summary.json `profile`.
    pub fn json(&self) -> serde_json::Value {
        let round = |v: f64, f: f64| (v * f).round() / f;
        let events: serde_json::Map<_, _> = self.events.iter().map(|(k, n)| (k.to_string(), json!(n))).collect();
        let shares: serde_json::Map<_, _> =
            self.shares.iter().map(|(k, x)| (k.to_string(), json!(round(*x, 1e4)))).collect();
        json!({
            "engine": self.engine,
            "events": events,
            "events_total": self.total_events(),
            "wall_s": round(self.wall_s, 1e4),
            "events_per_s": round(self.events_per_s(), 1.0),
            "wall_share": shares,
        })
    }

    /// The terminal's table: wall time by part beside events by kind.
    pub fn text(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(
            s,
            "  profile ({} engine): {} events in {:.3} s, {:.2} M events/s",
            self.engine,
            self.total_events(),
            self.wall_s,
            self.events_per_s() / 1e6
        );
        let _ = writeln!(s, "  {:<10} {:>7}    {:<18} {:>12}", "part", "wall %", "event kind", "count");
        for i in 0..self.shares.len().max(self.events.len()) {
            let part = match self.shares.get(i) {
                Some((k, x)) => format!("{k:<10} {:>7.1}", 100.0 * x),
                None => String::new(),
            };
            let kind = match self.events.get(i) {
                Some((k, n)) => format!("{k:<18} {n:>12}"),
                None => String::new(),
            };
            let _ = writeln!(s, "  {part:<18}    {kind}");
        }
        s
    }
}

/// An engine's event kinds, in the order its `Event::kind` numbers them:
/// the fabric's, then the engine's own three, then the DRAM's two.
pub const fn event_kinds(own: [&'static str; 3]) -> [&'static str; 10] {
    let f = crate::fabric::network::FabricEvent::KINDS;
    [f[0], f[1], f[2], f[3], f[4], own[0], own[1], own[2], "dram_wake", "dram_done"]
}
