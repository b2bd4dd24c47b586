//! The BI machine's semantics, driven message by message, and its
//! intra-domain invariant under the checker.

use std::collections::VecDeque;

use super::protocol::{Action, Bi, Ghost, Level, Msg, Node, P};
use super::{FlushOp, Params};
use crate::agents::protocol::{AgentId, Ctx, Protocol, Step};
use crate::check::explorer::{explore, Options};

struct H {
    p: Bi,
    agents: Vec<Node>,
    q: VecDeque<(AgentId, AgentId, Msg)>,
    /// Every message delivered, in order.
    log: Vec<(AgentId, AgentId, Msg)>,
}

impl H {
    fn new(p: Bi) -> Self {
        let (agents, _) = p.initial().remove(0);
        H { p, agents, q: VecDeque::new(), log: Vec::new() }
    }

    fn act(&mut self, a: AgentId, action: Action) {
        let mut sends = Vec::new();
        let mut g = Ghost;
        let mut ctx = Ctx::new(a, &mut g, &mut sends);
        self.p.act(&mut self.agents[a as usize], &mut ctx, action).expect("no violation");
        self.q.extend(sends.into_iter().map(|s| (s.to, a, s.msg)));
    }

    /// Deliver every message (a stalled one goes to the back).
    fn drain(&mut self) {
        let mut guard = 0;
        while let Some((to, from, msg)) = self.q.pop_front() {
            guard += 1;
            assert!(guard < 10_000, "no progress");
            let mut sends = Vec::new();
            let mut g = Ghost;
            let mut ctx = Ctx::new(to, &mut g, &mut sends);
            match self.p.on_message(&mut self.agents[to as usize], &mut ctx, from, msg).expect("no violation") {
                Step::Stall => self.q.push_back((to, from, msg)),
                Step::Done => {
                    self.log.push((to, from, msg));
                    self.q.extend(sends.into_iter().map(|s| (s.to, to, s.msg)));
                }
            }
            self.p.invariant(&self.agents, &Ghost).expect("swmr");
        }
    }

    fn core(&self, a: AgentId) -> &super::protocol::Core {
        match &self.agents[a as usize] {
            Node::Core(c) => c,
            _ => panic!("not a core"),
        }
    }

    fn load(&mut self, a: AgentId, line: u64) -> u32 {
        let level = if self.core(a).l2.contains(line) { Level::L2 } else { Level::Miss };
        self.act(a, Action::Load { line, level });
        self.drain();
        let (l, v) = self.core(a).last.expect("a load");
        assert_eq!(l, line);
        v
    }

    fn store(&mut self, a: AgentId, line: u64, val: u32) {
        self.act(a, Action::Store { line, val, level: Level::Miss });
        self.drain();
    }

    fn flush(&mut self, a: AgentId, line: u64, op: FlushOp) {
        self.act(a, Action::Flush { line, op });
        self.drain();
        assert!(self.core(a).flushing.is_empty());
    }

    fn holds(&self, a: AgentId, line: u64) -> Option<P> {
        self.core(a).l2.get(line).map(|l| l.st)
    }
}

fn two_domains(cores: usize) -> H {
    H::new(Bi::checking(2, cores, 2, 2))
}

#[test]
fn a_stale_read_across_domains_is_returned_until_a_flush() {
    let mut h = two_domains(1);
    let (c0, c1) = (0, 1); // domain 0's and domain 1's core
    assert_eq!(h.load(c1, 0), 0);
    h.store(c0, 0, 5);
    h.flush(c0, 0, FlushOp::Clwb); // written back: memory holds 5
    assert_eq!(h.holds(c0, 0), Some(P::E), "clwb keeps the line, clean");
    let Node::Mem(m) = &h.agents[4] else { panic!() };
    assert_eq!(m.get(&0), Some(&5));
    // no cross-domain snoop: domain 1 keeps reading its stale copy
    assert_eq!(h.load(c1, 0), 0);
    assert_eq!(h.load(c1, 0), 0);
    h.flush(c1, 0, FlushOp::Clflushopt);
    assert_eq!(h.holds(c1, 0), None);
    assert_eq!(h.load(c1, 0), 5, "after its own flush the domain reads memory");
}

#[test]
fn a_stale_read_ends_with_an_eviction_of_every_level() {
    let mut h = two_domains(1);
    assert_eq!(h.load(1, 0), 0);
    h.store(0, 0, 7);
    h.flush(0, 0, FlushOp::Clflush);
    assert_eq!(h.holds(0, 0), None, "clflush invalidates");
    // a private eviction leaves the stale copy in the domain's L3
    h.act(1, Action::Evict { line: 0 });
    h.drain();
    assert_eq!(h.load(1, 0), 0, "the L3 still holds the stale line");
    h.act(1, Action::Evict { line: 0 });
    h.act(3, Action::LlcEvict { line: 0 });
    h.drain();
    assert_eq!(h.load(1, 0), 7, "evicted from every level: the load reads memory");
}

#[test]
fn a_flush_invalidates_every_cache_of_its_domain_and_no_other() {
    // domains of two cores: cores 0, 1 in domain 0; 2, 3 in domain 1
    let mut h = two_domains(2);
    for c in 0..4 {
        h.load(c, 1);
    }
    assert_eq!(h.holds(1, 1), Some(P::S));
    h.flush(0, 1, FlushOp::Clflushopt);
    assert_eq!(h.holds(0, 1), None);
    assert_eq!(h.holds(1, 1), None, "the other core of the domain lost it too");
    assert_eq!(h.holds(2, 1), Some(P::S), "another domain keeps its copy");
    assert_eq!(h.holds(3, 1), Some(P::S));
}

#[test]
fn a_flush_of_a_modified_line_in_another_core_writes_it_back() {
    let mut h = two_domains(2);
    h.store(1, 0, 9);
    h.flush(0, 0, FlushOp::Clflush);
    assert_eq!(h.holds(1, 0), None);
    let Node::Mem(m) = &h.agents[6] else { panic!() };
    assert_eq!(m.get(&0), Some(&9), "the owner's data reached memory");
}

#[test]
fn a_flush_of_a_line_the_domain_does_not_hold_is_broadcast() {
    let mut h = two_domains(2);
    h.flush(0, 1, FlushOp::Clflushopt);
    let invs = h.log.iter().filter(|(to, _, m)| *to == 1 && matches!(m, Msg::Inv { .. })).count();
    assert_eq!(invs, 1, "the domain's other core is asked");
    assert!(!h.log.iter().any(|(to, _, _)| *to >= 2 && *to < 4), "no core of another domain is");
    let mut p = Bi::checking(2, 2, 2, 2);
    p.params = Params { broadcast_on_miss: false, ..Params::default() };
    let mut h = H::new(p);
    h.flush(0, 1, FlushOp::Clflushopt);
    assert!(!h.log.iter().any(|(_, _, m)| matches!(m, Msg::Inv { .. })));
}

#[test]
fn clflush_serialises_and_clflushopt_overlaps_up_to_the_slots() {
    let mut p = Bi::checking(1, 1, 4, 1);
    p.params.flush_slots = 2;
    let mut h = H::new(p);
    let flushes = |h: &H| {
        let mut out = Vec::new();
        h.p.actions(&h.agents[0], 0, &Ghost, &mut out);
        out.into_iter().filter(|a| matches!(a, Action::Flush { .. })).collect::<Vec<_>>()
    };
    h.act(0, Action::Flush { line: 0, op: FlushOp::Clflush });
    assert!(flushes(&h).is_empty(), "nothing issues behind a clflush");
    let mut out = Vec::new();
    h.p.actions(&h.agents[0], 0, &Ghost, &mut out);
    assert!(out.is_empty(), "not even a load");
    h.drain();
    h.act(0, Action::Flush { line: 0, op: FlushOp::Clflushopt });
    assert!(flushes(&h).iter().any(|a| matches!(a, Action::Flush { op: FlushOp::Clflushopt, .. })));
    assert!(!flushes(&h).iter().any(|a| matches!(a, Action::Flush { op: FlushOp::Clflush, .. })));
    h.act(0, Action::Flush { line: 1, op: FlushOp::Clwb });
    assert!(flushes(&h).is_empty(), "two in flight fill the slots");
    h.drain();
    assert_eq!(flushes(&h).len(), 4 * 3);
}

#[test]
fn clwb_invalidates_when_asked_to() {
    let mut p = Bi::checking(1, 1, 1, 2);
    p.params.clwb_invalidates = true;
    let mut h = H::new(p);
    h.store(0, 0, 1);
    h.flush(0, 0, FlushOp::Clwb);
    assert_eq!(h.holds(0, 0), None);
}

fn check(p: &Bi) -> crate::check::explorer::Report {
    let opts = Options { max_states: Some(30_000_000), threads: 2, ..Options::default() };
    explore(p, &opts, &mut |_| {})
}

#[test]
fn one_writer_per_line_inside_a_domain_under_the_checker() {
    for p in [Bi::checking(1, 2, 1, 1), Bi::checking(2, 1, 1, 1)] {
        eprintln!("{}", p.name());
        let r = check(&p);
        eprintln!("{} states complete {} depth {}", r.states, r.complete, r.depth);
        assert!(r.violation.is_none(), "{:?}", r.violation);
        assert!(r.complete, "{} states", r.states);
        assert!(r.states > 100, "{} states", r.states);
    }
}

// ------------------------------------------------------------ Fig 12's periodic invalidation, timed

fn periodic(bench: &str, extra: &[&str]) -> crate::RunResult {
    let toml = include_str!("../../../../../examples/bi_superdome.toml");
    let mut o: Vec<String> = vec!["sim.max_time=\"1s\"".into()];
    o.extend(bench.split(',').map(|kv| format!("protocol.bi.bench.{kv}")));
    o.extend(extra.iter().map(|s| s.to_string()));
    let spec =
        crate::config::resolve(toml, "test.toml", crate::Format::Toml, &o, None).unwrap_or_else(|e| panic!("{e}"));
    let r = crate::run_spec(&spec, &mut |_| true);
    assert_eq!(r.outcome, crate::Outcome::Completed, "{:?}", r.warnings);
    r
}

fn stat(r: &crate::RunResult, k: &str) -> f64 {
    r.protocol_stats.iter().find(|s| s.0 == k).unwrap_or_else(|| panic!("no {k}: {:?}", r.protocol_stats)).1
}

#[test]
fn a_flush_on_another_core_makes_the_loaders_next_load_miss() {
    // cores 0 and 1 share domain 0: core 1's clflushopt drops core 0's copy, so core 0 refills from memory
    let mut h = two_domains(2);
    h.load(0, 1);
    assert_eq!(h.holds(0, 1), Some(P::E));
    h.flush(1, 1, FlushOp::Clflushopt);
    assert_eq!(h.holds(0, 1), None, "the loader's private copy went");
    let before = h.log.len();
    h.load(0, 1);
    assert!(
        h.log[before..].iter().any(|(_, _, m)| matches!(m, Msg::MemRd { line: 1 })),
        "the next load misses to memory: the L3 copy went too"
    );
}

#[test]
fn with_flush_core_local_another_cores_flush_leaves_the_loaders_copy() {
    let mut h = H::new(Bi::checking(2, 2, 2, 2).with_mutant(Some(super::Mutant::FlushCoreLocal)));
    h.load(0, 1);
    h.flush(1, 1, FlushOp::Clflushopt);
    assert_eq!(h.holds(0, 1), Some(P::E), "only the issuer's private caches are flushed");
    h.flush(0, 1, FlushOp::Clflushopt);
    assert_eq!(h.holds(0, 1), None);
    let before = h.log.len();
    h.load(0, 1);
    assert!(!h.log[before..].iter().any(|(_, _, m)| matches!(m, Msg::MemRd { .. })), "the L3 kept it");
}

#[test]
fn the_flusher_invalidates_once_a_period_and_the_loader_pays_for_it() {
    // 64 KiB (1024 lines) fits L2; periods of 20 µs, 5 of them, the first not measured
    let ws = "working_set=\"64KiB\",period=\"20us\",periods=5";
    let none = periodic(&format!("kind=\"periodic\",mode=\"noflush\",{ws}"), &[]);
    let other = periodic(&format!("kind=\"periodic\",mode=\"other\",{ws}"), &[]);
    let same = periodic(&format!("kind=\"periodic\",mode=\"same\",{ws}"), &[]);
    for r in [&none, &other, &same] {
        assert_eq!(stat(r, "bench_done"), 1.0);
        assert_eq!(stat(r, "bench_measured_ns"), 80_000.0);
    }
    assert_eq!(stat(&none, "bench_flushes"), 0.0);
    // one invalidation per measured period, whoever runs it: the period is respected
    assert_eq!(stat(&other, "bench_flushes"), 4.0);
    assert_eq!(stat(&same, "bench_flushes"), 4.0);
    let (n, o, s) = (stat(&none, "bench_ops"), stat(&other, "bench_ops"), stat(&same, "bench_ops"));
    // each period the loader refills its 1024 lines from memory (≈ 85 ns more each, ≈ 87 µs of 20)...
    assert!(o < 0.9 * n, "other core: {o} vs {n} loads");
    // ... and on the same core it also runs the flushes
    assert!(s < o, "same core: {s} vs other core {o} loads");
    assert!(stat(&same, "bench_flush_ns") > 1024.0, "a flush costs the loader ≥ 1 ns a line");
    // with flush-core-local, the other core's flushes leave the loader's copies: no loss
    let local =
        periodic(&format!("kind=\"periodic\",mode=\"other\",{ws}"), &["protocol.bi.mutant=\"flush-core-local\""]);
    assert!(stat(&local, "bench_ops") > 0.99 * n, "{} vs {n}", stat(&local, "bench_ops"));
}

#[test]
fn a_loader_whose_refills_are_over_idles_to_the_next_invalidation() {
    let r = periodic("kind=\"periodic\",mode=\"other\",working_set=\"4KiB\",period=\"20us\",periods=3,settle=500", &[]);
    // 64 lines: 500 loads (≈ 64 refills and 436 L1 hits) take ≈ 6 µs of each 20 µs period
    let idle = stat(&r, "bench_idle_ns");
    assert!(idle > 2.0 * 12_000.0 && idle < 40_000.0, "idle {idle} ns");
    assert_eq!(stat(&r, "bench_ops"), 1000.0, "500 loads a measured period");
}

#[test]
fn aggressive_invalidation_makes_every_load_a_miss() {
    let r = periodic("kind=\"periodic\",mode=\"aggressive\",working_set=\"16KiB\",period=\"20us\",periods=2", &[]);
    // a miss to memory (90 ns), then the flush's issue and round trip and the fence
    let per = stat(&r, "bench_ns_per_op");
    assert!(per > 90.0 && per < 140.0, "{per} ns a load");
}

#[test]
fn the_periodic_bench_is_deterministic() {
    let b = "kind=\"periodic\",mode=\"other\",working_set=\"256KiB\",period=\"10us\",periods=3";
    let (a, c) = (periodic(b, &[]), periodic(b, &[]));
    assert_eq!(a.protocol_stats, c.protocol_stats);
    assert_eq!(a.events, c.events);
}
