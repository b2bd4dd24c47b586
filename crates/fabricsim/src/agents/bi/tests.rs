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
    g: Ghost,
}

impl H {
    fn new(p: Bi) -> Self {
        let (agents, _) = p.initial().remove(0);
        H { p, agents, q: VecDeque::new(), log: Vec::new(), g: Ghost::default() }
    }

    fn act(&mut self, a: AgentId, action: Action) {
        let mut sends = Vec::new();
        let mut ctx = Ctx::new(a, &mut self.g, &mut sends);
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
            let mut ctx = Ctx::new(to, &mut self.g, &mut sends);
            match self.p.on_message(&mut self.agents[to as usize], &mut ctx, from, msg).expect("no violation") {
                Step::Stall => self.q.push_back((to, from, msg)),
                Step::Done => {
                    self.log.push((to, from, msg));
                    self.q.extend(sends.into_iter().map(|s| (s.to, to, s.msg)));
                }
            }
            self.p.invariant(&self.agents, &self.g).expect("swmr");
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
    p.params.fill_buffers = 2;
    let mut h = H::new(p);
    let flushes = |h: &H| {
        let mut out = Vec::new();
        h.p.actions(&h.agents[0], 0, &Ghost::default(), &mut out);
        out.into_iter().filter(|a| matches!(a, Action::Flush { .. })).collect::<Vec<_>>()
    };
    h.act(0, Action::Flush { line: 0, op: FlushOp::Clflush });
    assert!(flushes(&h).is_empty(), "nothing issues behind a clflush");
    let mut out = Vec::new();
    h.p.actions(&h.agents[0], 0, &Ghost::default(), &mut out);
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

// ------------------------------------------------------------ coherent mode

fn coherent(cores: usize) -> H {
    H::new(Bi::checking(2, cores, 2, 2).with_coherent(true))
}

fn home_value(h: &H, line: u64) -> Option<u32> {
    let Node::Home(m) = h.agents.last().expect("a memory") else { panic!("not a home") };
    m.mem.get(&line).copied()
}

#[test]
fn coherent_a_load_sees_the_store_of_another_domain() {
    // the same steps as a_stale_read_across_domains_is_returned_until_a_flush, coherent
    let mut h = coherent(1);
    let (c0, c1) = (0, 1);
    assert_eq!(h.load(c1, 0), 0);
    h.store(c0, 0, 5);
    assert_eq!(h.holds(c1, 0), None, "the store invalidated domain 1's copy");
    assert_eq!(h.load(c1, 0), 5, "the modified line comes from domain 0 through the home");
    assert_eq!(h.holds(c0, 0), Some(P::S), "domain 0 keeps a shared copy");
    assert_eq!(home_value(&h, 0), Some(5), "the home wrote the dirty data back");
    assert!(h.log.iter().any(|(to, _, m)| *to == 2 && matches!(m, Msg::Snoop { inv: false, .. })));
    // and the non-coherent machine returns the stale value on the same steps
    let mut n = two_domains(1);
    assert_eq!(n.load(c1, 0), 0);
    n.store(c0, 0, 5);
    assert_eq!(n.load(c1, 0), 0, "not coherent: stale");
}

#[test]
fn coherent_an_upgrade_invalidates_the_other_domains() {
    let mut h = coherent(2);
    for c in 0..4 {
        h.load(c, 1);
    }
    assert_eq!(h.holds(3, 1), Some(P::S), "four sharers: S everywhere");
    h.act(1, Action::Store { line: 1, val: 2, level: Level::L2 });
    h.drain();
    assert_eq!(h.holds(1, 1), Some(P::M));
    for c in [0, 2, 3] {
        assert_eq!(h.holds(c, 1), None, "core {c} lost its copy");
    }
    assert_eq!(h.load(2, 1), 2);
}

#[test]
fn coherent_an_exclusive_line_moves_between_domains_and_back() {
    let mut h = coherent(1);
    assert_eq!(h.load(0, 0), 0);
    assert_eq!(h.holds(0, 0), Some(P::E), "no other holder: exclusive at both levels");
    h.store(0, 0, 1); // a silent E -> M
    h.store(1, 0, 2);
    assert_eq!(h.holds(0, 0), None);
    h.store(0, 0, 1);
    assert_eq!(h.holds(1, 0), None);
    assert_eq!(h.load(1, 0), 1);
}

#[test]
fn coherent_a_clean_line_leaves_silently_and_a_stale_record_is_answered() {
    let mut h = coherent(1);
    h.load(0, 0);
    h.log.clear();
    h.act(0, Action::Evict { line: 0 });
    h.act(2, Action::LlcEvict { line: 0 });
    h.drain();
    assert!(!h.log.iter().any(|(to, _, _)| *to == 4), "a clean eviction tells the home nothing");
    h.store(1, 0, 3);
    assert!(
        h.log.iter().any(|(to, _, m)| *to == 4 && matches!(m, Msg::SnoopAck { data: None, .. })),
        "the stale owner answers with no data"
    );
    assert_eq!(h.load(0, 0), 3);
    // a dirty L3 victim is written back, and the home drops the owner
    h.store(0, 0, 4);
    h.act(0, Action::Evict { line: 0 });
    h.drain();
    h.act(2, Action::LlcEvict { line: 0 });
    h.drain();
    assert_eq!(home_value(&h, 0), Some(4));
    let Node::Home(m) = &h.agents[4] else { panic!() };
    assert!(!m.dir.contains_key(&0), "no holder left: {:?}", m.dir);
    assert_eq!(h.load(1, 0), 4);
}

#[test]
fn coherent_a_flush_acts_on_every_domain() {
    let mut h = coherent(2);
    for c in 0..4 {
        h.load(c, 1);
    }
    h.flush(0, 1, FlushOp::Clflushopt);
    for c in 0..4 {
        assert_eq!(h.holds(c, 1), None, "core {c} lost the line: the coherence domain is the machine");
    }
    // clwb of a line another domain modified writes it back and keeps copies clean
    h.store(3, 0, 2);
    h.flush(0, 0, FlushOp::Clwb);
    assert_eq!(home_value(&h, 0), Some(2));
    assert_eq!(h.holds(3, 0), Some(P::S), "clwb keeps the line, clean");
    // clflush of a line the domain does not hold: no broadcast, the home snoops the holder
    h.store(2, 0, 1);
    h.log.clear();
    h.flush(0, 0, FlushOp::Clflush);
    assert_eq!(h.holds(2, 0), None);
    assert_eq!(home_value(&h, 0), Some(1));
    assert!(!h.log.iter().any(|(to, _, m)| *to == 1 && matches!(m, Msg::Inv { .. })), "no broadcast in domain 0");
}

#[test]
fn coherent_machine_wide_swmr_under_the_checker() {
    let p = Bi::checking(2, 1, 1, 1).with_coherent(true);
    let opts = Options { check_deadlock: true, threads: 2, ..Options::default() };
    let r = explore(&p, &opts, &mut |_| {});
    eprintln!("{}: {} states complete {} depth {}", p.name(), r.states, r.complete, r.depth);
    assert!(r.violation.is_none(), "{:?}", r.violation);
    assert!(r.complete, "{} states", r.states);
    let p = p.with_mutant(Some(super::Mutant::HomeForgetsSharer));
    let r = check(&p);
    let v = r.violation.expect("the mutant breaks coherence");
    eprintln!("{}: {v:?}", p.name());
}

/// Random walks over a machine the exhaustive search cannot finish (two
/// domains of two cores over two lines): any core's or LLC's action, or the
/// delivery of any message in flight (the `down` channel in order), checking
/// the invariants after every step and that something can always progress.
fn random_walks(p: Bi, walks: u64, steps: usize) -> u64 {
    use crate::agents::protocol::ChannelOrder;
    let mut delivered = 0;
    for seed in 1..=walks {
        let mut rng = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15);
        let mut next = |n: usize| {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            (rng % n as u64) as usize
        };
        let mut h = H::new(p.clone());
        for _ in 0..steps {
            // messages that may arrive next: any, but a FIFO channel's oldest per (from, to)
            let ready: Vec<usize> = (0..h.q.len())
                .filter(|&i| {
                    let (to, from, m) = h.q[i];
                    p.vc_orders()[m.vc() as usize] == ChannelOrder::Unordered
                        || !h.q.iter().take(i).any(|&(t, f, x)| t == to && f == from && x.vc() == m.vc())
                })
                .collect();
            let mut acts = Vec::new();
            for a in 0..h.agents.len() {
                let mut out = Vec::new();
                p.actions(&h.agents[a], a as AgentId, &h.g, &mut out);
                acts.extend(out.into_iter().map(|x| (a as AgentId, x)));
            }
            // favour deliveries so that transactions finish
            if !ready.is_empty() && (acts.is_empty() || next(4) != 0) {
                let mut tried = ready.clone();
                let mut done = false;
                while !tried.is_empty() && !done {
                    let j = tried.swap_remove(next(tried.len()));
                    let (to, from, msg) = h.q[j];
                    let mut sends = Vec::new();
                    let mut ctx = Ctx::new(to, &mut h.g, &mut sends);
                    let step = p.on_message(&mut h.agents[to as usize], &mut ctx, from, msg).expect("no violation");
                    if step == Step::Done {
                        h.q.remove(j);
                        h.q.extend(sends.into_iter().map(|s| (s.to, to, s.msg)));
                        done = true;
                        delivered += 1;
                    }
                }
                assert!(done, "seed {seed}: deadlock: every message in flight stalls: {:?}", h.q);
                if done {
                    p.invariant(&h.agents, &h.g).unwrap_or_else(|e| panic!("seed {seed}: {e:?}"));
                    continue;
                }
            }
            if acts.is_empty() {
                break;
            }
            let (a, action) = acts[next(acts.len())];
            h.act(a, action);
            p.invariant(&h.agents, &h.g).unwrap_or_else(|e| panic!("seed {seed}: {e:?}"));
        }
    }
    delivered
}

#[test]
fn coherent_random_walks_over_two_domains_of_two_cores_and_two_lines() {
    let n = random_walks(Bi::checking(2, 2, 2, 2).with_coherent(true), 300, 3_000);
    assert!(n > 300_000, "{n} deliveries");
    // and they catch the mutant
    let p = Bi::checking(2, 2, 2, 2).with_coherent(true).with_mutant(Some(super::Mutant::HomeForgetsSharer));
    let caught = std::panic::catch_unwind(|| random_walks(p, 300, 3_000)).is_err();
    assert!(caught, "the walks find the mutant's stale copy");
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

#[test]
fn a_flush_that_overtakes_the_cores_own_write_back_keeps_the_data() {
    // core 0 writes the line, evicts it (its PutM goes out), then clflushes it; the LLC gets the
    // flush first, while it still counts core 0 the owner, and drops the PutM that follows
    let mut h = two_domains(1);
    h.store(0, 0, 5);
    h.act(0, Action::Evict { line: 0 });
    h.act(0, Action::Flush { line: 0, op: FlushOp::Clflush });
    let flush = h.q.pop_back().expect("the flush");
    assert!(matches!(flush.2, Msg::Flush { data: Some(5), .. }), "{flush:?}");
    h.q.push_front(flush);
    h.drain();
    assert!(h.core(0).wb.is_empty(), "both the PutM and the flush were answered");
    assert_eq!(h.load(0, 0), 5, "memory has the written value");
}

// ------------------------------------------------------------ Table 1's tree, timed

fn tree(extra: &[&str]) -> crate::RunResult {
    let toml = include_str!("../../../../../examples/bi_superdome.toml");
    let mut o: Vec<String> = vec!["sim.max_time=\"1s\"".into()];
    o.extend(extra.iter().map(|kv| {
        if kv.starts_with("coherent") {
            format!("protocol.bi.{kv}")
        } else {
            format!("protocol.bi.tree.{kv}")
        }
    }));
    let spec =
        crate::config::resolve(toml, "test.toml", crate::Format::Toml, &o, None).unwrap_or_else(|e| panic!("{e}"));
    let r = crate::run_spec(&spec, &mut |_| true);
    assert_eq!(r.outcome, crate::Outcome::Completed, "{:?}", r.warnings);
    r
}

#[test]
fn the_tree_runs_lookups_and_delegated_updates() {
    let r = tree(&["nodes=1024", "updates=0.1", "time=\"400us\"", "warmup=\"100us\"", "period=\"100us\""]);
    for s in &r.protocol_stats {
        eprintln!("{} = {}", s.0, s.1);
    }
    assert!(stat(&r, "tree_reads") > 100.0);
    assert!(stat(&r, "tree_writes") > 5.0);
    assert!(stat(&r, "tree_applied") > 0.0);
}

#[test]
fn under_urcu_every_core_looks_up_and_updates_under_the_lock() {
    let r = tree(&[
        "coherent=true",
        "front_end=\"urcu\"",
        "nodes=1024",
        "updates=0.1",
        "time=\"400us\"",
        "warmup=\"100us\"",
    ]);
    for s in &r.protocol_stats {
        eprintln!("{} = {}", s.0, s.1);
    }
    assert!(stat(&r, "tree_reads") > 100.0);
    assert!(stat(&r, "tree_writes") > 5.0);
    assert_eq!(stat(&r, "tree_applied"), 0.0, "no delegate");
}

#[test]
fn no_lookup_reads_a_reused_node_and_without_the_period_subtraction_one_does() {
    // no store buffer: with one the delegate outruns the 2 ms run's object pool (a limit of the pool, noted)
    let base = [
        "nodes=64",
        "updates=0.5",
        "time=\"2ms\"",
        "warmup=\"0ns\"",
        "period=\"20us\"",
        "log_cap=64",
        "store_buffer=0",
    ];
    let r = tree(&base);
    for s in &r.protocol_stats {
        eprintln!("{} = {}", s.0, s.1);
    }
    assert!(stat(&r, "tree_reads") > 1000.0);
    assert_eq!(stat(&r, "tree_order_violations"), 0.0);
    let mut m = base.to_vec();
    m.push("mutant=\"no-period-subtraction\"");
    let r = tree(&m);
    for s in &r.protocol_stats {
        eprintln!("mutant {} = {}", s.0, s.1);
    }
    assert!(stat(&r, "tree_order_violations") > 0.0, "a reclaimed node is read");
}

#[test]
fn a_tree_whose_freed_log_wraps_stops_with_an_error_naming_the_pool() {
    // the store buffer lets the delegate free faster than bi_reclaim returns objects through a 64-record log
    let toml = include_str!("../../../../../examples/bi_superdome.toml");
    let o: Vec<String> = ["nodes=64", "updates=0.5", "time=\"2ms\"", "warmup=\"0ns\"", "period=\"20us\"", "log_cap=64"]
        .iter()
        .map(|kv| format!("protocol.bi.tree.{kv}"))
        .chain(["sim.max_time=\"1s\"".to_string()])
        .collect();
    let spec =
        crate::config::resolve(toml, "test.toml", crate::Format::Toml, &o, None).unwrap_or_else(|e| panic!("{e}"));
    let r = crate::run_spec(&spec, &mut |_| true);
    // the run stops at the error (it does not panic) and says why
    assert_eq!(r.outcome, crate::Outcome::ProtocolError, "{:?}", r.warnings);
    let why = r.warnings.iter().find(|w| w.starts_with("protocol error")).expect("the run reports the pool");
    assert!(why.contains("object pool (4416 objects) is exhausted") && why.contains("log_cap"), "{why}");
}

#[test]
fn the_machines_core_is_the_skylake_sp_preset() {
    // looked up by name, as a configuration's `preset` is: BI's core must be
    // the preset docs/cpu-presets.md cites, not a copy of its values
    let p = crate::agents::core::presets::find("skylake-sp").expect("the preset BI runs on");
    let d = Params::default();
    assert_eq!(p.core.cycle, 400, "BI §7: 2.5 GHz");
    assert_eq!(super::CYCLE, p.core.cycle);
    assert_eq!((d.l1_latency, d.l2_latency), (p.l1.latency(p.core.cycle), p.l2.latency(p.core.cycle)));
    assert_eq!(d.fill_buffers as u32, p.core.fill_buffers, "every miss holds one of the preset's fill buffers");
    assert_eq!(super::store_buffer::FILL_BUFFERS as u32, p.core.fill_buffers);
    assert_eq!(super::urcu::PAUSE, 140 * p.core.cycle);
}

// ------------------------------------------------------------ a program core on the shared front end, timed

/// When core 0's `calls` end (each script ends with a zero computation, so
/// the run's last event is the core reaching its end), on BI's machine
/// with front end `core`; every line starts in memory only.
fn script_end(calls: &[super::runtime::Call], core: crate::agents::core::Params) -> crate::engine::Time {
    use super::program::{App, ProgramSpec};
    use super::runtime::{Call, DomainClock, Layout, RtConfig, Runtime};
    let toml = include_str!("../../../../../examples/bi_superdome.toml");
    let o: Vec<String> = vec!["sim.max_time=\"1s\"".into(), "protocol.bi.tree.nodes=16".into()];
    let spec =
        crate::config::resolve(toml, "test.toml", crate::Format::Toml, &o, None).unwrap_or_else(|e| panic!("{e}"));
    let ps = spec.protocol.as_ref().expect("a protocol run");
    let b: &super::family::BiSpec = ps.params.get().expect("bi's parameters");
    let cores = spec.requesters.len();
    let layout = Layout {
        readers: 1,
        writers: 1,
        log_cap: 8,
        obj_base: 1000,
        obj_lines: 16,
        reader_time_base: 10,
        freed_base: 20,
        modified_base: 40,
        modified_fixed: false,
    };
    let mut calls = calls.to_vec();
    calls.push(Call::Compute { ns: 0 });
    let mut apps = vec![None; cores];
    apps[0] = Some((0, App::Script { calls, next: 0, rets: Vec::new() }));
    let program = ProgramSpec {
        runtime: Runtime { layout, cfg: RtConfig::default() },
        clocks: vec![DomainClock { offset: 0, tick: 1 }; b.domains],
        apps,
        image: Vec::new(),
        warm: false,
        world: None,
        buffered: true,
        core,
    };
    let p = Bi {
        domains: b.domains,
        cores: cores / b.domains,
        mems: spec.memories.len() - b.domains,
        interleave: b.interleave,
        params: b.params,
        shapes: Some(b.shapes),
        bench: None,
        bench_home: None,
        mutant: None,
        lines: 0,
        values: 0,
        keep_values: false,
        seed: spec.seed,
        coherent: false,
        program: Some(std::sync::Arc::new(program)),
        tree: None,
    };
    let sys = crate::sim::protocol::ProtocolSystem::build(&spec, p, ps).unwrap_or_else(|e| panic!("{e}"));
    let r = sys.run(&mut |_| true);
    assert_eq!(r.outcome, crate::Outcome::Completed, "{:?}", r.warnings);
    r.sim_time
}

fn skylake() -> crate::agents::core::Params {
    super::CORE.core
}

/// `ReadObj` of `lines` lines of object `obj`: the first line's word is
/// the result, the others are only brought in.
fn read_obj(obj: u32, lines: u32) -> super::runtime::Call {
    super::runtime::Call::ReadObj { obj, lines }
}

#[test]
fn a_program_cores_independent_load_misses_overlap_up_to_its_fill_buffers() {
    let one = script_end(&[read_obj(0, 1)], skylake());
    assert!(one > 50 * crate::engine::NS, "a line from memory: {one} ps");
    // the first line's word is waited for; the 8 after it only come in
    for (fill, rounds) in [(12, 1), (4, 2), (2, 4), (1, 8)] {
        let t = script_end(&[read_obj(0, 9)], crate::agents::core::Params { fill_buffers: fill, ..skylake() });
        let expected = one * (1 + rounds);
        let (lo, hi) = (expected * 9 / 10, expected * 11 / 10);
        assert!((lo..=hi).contains(&t), "8 misses with {fill} fill buffers: {t} ps, expected about {expected}");
    }
}

#[test]
fn a_program_cores_dependent_loads_cost_the_sum_of_their_latencies() {
    let one = script_end(&[read_obj(0, 1)], skylake());
    // each object's word is the call's result: the thread waits for each
    let chain: Vec<_> = (0..6).map(|o| read_obj(o, 1)).collect();
    let t = script_end(&chain, skylake());
    let (lo, hi) = (6 * one * 95 / 100, 6 * one * 105 / 100);
    assert!((lo..=hi).contains(&t), "6 dependent misses: {t} ps, one {one}");
    // a hit after the miss: its L1 latency exactly
    let hit = script_end(&[read_obj(0, 1), read_obj(0, 1)], skylake());
    assert_eq!(hit - one, Params::default().l1_latency);
}

#[test]
fn a_program_cores_computation_costs_its_instructions_over_the_width_and_fills_the_window() {
    use super::runtime::Call;
    let ns = crate::engine::NS;
    let one = script_end(&[read_obj(0, 1)], skylake());
    // 100 ns at 4 instructions a 400 ps cycle: 1000 instructions, 250 cycles
    let t = script_end(&[read_obj(0, 1), Call::Compute { ns: 100 }], skylake());
    assert_eq!(t - one, 100 * ns);
    // behind a miss the thread went past, a computation dispatches while the
    // miss is out, as far as the reorder buffer reaches (500 instructions);
    // a load after it ends the run
    let two = [read_obj(0, 2), Call::Compute { ns: 50 }, read_obj(5, 1)];
    let big = script_end(&two, crate::agents::core::Params { rob: 1024, ..skylake() });
    let overlap = big - 2 * one;
    assert!(overlap.abs_diff(50 * ns) < 2 * ns, "the second line's miss overlaps the computation: {overlap} ps");
    let t = script_end(&two, skylake());
    assert!(t > 3 * one, "224 entries: the computation waits for the miss to retire: {t} ps, one {one}");
}

// ------------------------------------------------------------ every miss on the preset's fill buffers

/// A Fig 12 loader (no invalidation unless `mode` says) on one core, its
/// lines in memory only.
fn loader(mode: super::FlushMode, dependent: bool) -> H {
    let mut p = Bi::checking(1, 1, 0, 0);
    p.bench = Some(super::Bench::Periodic {
        lines: 1 << 20,
        mode,
        op: FlushOp::Clflushopt,
        period: crate::engine::MS,
        periods: 1,
        skip: 0,
        settle: 0,
        dependent,
        warm: false,
    });
    H::new(p)
}

/// Act on core 0's benchmark actions while it has one and `go` accepts it;
/// the misses and flushes it issued.
fn issue_all(h: &mut H, go: impl Fn(&Action) -> bool) -> (usize, usize) {
    let (mut loads, mut flushes) = (0, 0);
    for _ in 0..1_000 {
        let mut out = Vec::new();
        h.p.actions(&h.agents[0], 0, &Ghost::default(), &mut out);
        let Some(&a) = out.first().filter(|a| go(a)) else { break };
        loads += matches!(a, Action::Load { level: Level::Miss, .. }) as usize;
        flushes += matches!(a, Action::Flush { .. }) as usize;
        h.act(0, a);
    }
    (loads, flushes)
}

#[test]
fn a_bench_cores_independent_misses_overlap_up_to_the_presets_fill_buffers() {
    let fill = super::CORE.core.fill_buffers as usize;
    let mut h = loader(super::FlushMode::NoFlush, false);
    assert_eq!(issue_all(&mut h, |_| true), (fill, 0), "min(N, the preset's fill buffers) in flight");
    assert_eq!(h.core(0).loads.len(), fill);
    // the data comes back: as many go again
    h.drain();
    assert_eq!(issue_all(&mut h, |_| true).0, fill);
    // the machine's fill buffers, not a benchmark's own count
    let mut h = loader(super::FlushMode::NoFlush, false);
    h.p.params.fill_buffers = 4;
    assert_eq!(issue_all(&mut h, |_| true).0, 4);
    // a pointer chase has one at a time on any core
    let mut h = loader(super::FlushMode::NoFlush, true);
    assert_eq!(issue_all(&mut h, |_| true).0, 1);
}

#[test]
fn a_flush_holds_a_fill_buffer_so_loads_and_flushes_share_the_presets() {
    let fill = super::CORE.core.fill_buffers as usize;
    let mut h = loader(super::FlushMode::Same, false);
    let Node::Core(c) = &mut h.agents[0] else { panic!("a core") };
    c.run.next_flush = crate::engine::MS / 2;
    // 5 loads out
    for _ in 0..5 {
        let mut out = Vec::new();
        h.p.actions(&h.agents[0], 0, &Ghost::default(), &mut out);
        assert!(matches!(out[0], Action::Load { level: Level::Miss, .. }), "{out:?}");
        h.act(0, out[0]);
    }
    // then the invalidation is due: 7 clflushopts join them, not 12
    let Node::Core(c) = &mut h.agents[0] else { panic!("a core") };
    c.run.next_flush = 0;
    let (_, flushes) = issue_all(&mut h, |a| matches!(a, Action::Flush { .. }));
    assert_eq!(flushes, fill - 5, "a clflushopt takes a fill buffer the loads hold");
    assert_eq!(h.core(0).flushing.len() + h.core(0).loads.len(), fill);
    // the acks and the data free them all
    h.drain();
    assert_eq!(issue_all(&mut h, |a| matches!(a, Action::Flush { .. })).1, fill);
}

/// `n` objects' first lines each stored to and written back (`Alloc`: a
/// store, then a clwb), every line a miss.
fn stores(n: u32) -> Vec<super::runtime::Call> {
    (0..n).map(|obj| super::runtime::Call::Alloc { obj, track: false }).collect()
}

#[test]
fn a_store_buffer_of_one_entry_serialises_the_stores_under_tso() {
    let one = script_end(&[read_obj(0, 1)], skylake());
    let preset = script_end(&stores(8), skylake());
    let single = script_end(&stores(8), crate::agents::core::Params { store_buffer: 1, ..skylake() });
    assert!(single >= 8 * one * 9 / 10, "8 ownership misses one after another: {single} ps, one {one}");
    assert!(3 * preset < single, "56 entries overlap them: {preset} ps against {single}");
}

#[test]
fn a_full_store_buffer_of_the_presets_size_stalls_the_core() {
    use super::runtime::Call;
    let ns = crate::engine::NS;
    // 60 stores and their clwbs: 120 entries, more than the preset's 56
    let big = crate::agents::core::Params { store_buffer: 1024, ..skylake() };
    let drain = script_end(&stores(60), big);
    // a computation after them as long as their drain
    let mut calls = stores(60);
    calls.push(Call::Compute { ns: drain / ns });
    let overlapped = script_end(&calls, big);
    assert!(overlapped < drain * 11 / 10, "1024 entries: the computation overlaps the drain: {overlapped} ps");
    let stalled = script_end(&calls, skylake());
    assert!(
        stalled > drain * 13 / 10,
        "56 entries: the computation waits until 64 entries performed: {stalled} ps, drain {drain} ps"
    );
}
