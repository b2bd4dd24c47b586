//! The shared core front end (`agents::core`, docs/core.md) against a
//! memory of fixed latencies: every operation carries its latency and
//! whether it is a miss (outstanding, an event) or a hit (accounted).

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use fabricsim::agents::core::{Core, CoreError, Kind, Model, Next, Op, OpId, Order, Params};
use fabricsim::engine::Time;

const NS: Time = 1000;

/// (latency, miss)
type Mem = (Time, bool);

fn params(model: Model) -> Params {
    Params { rob: 64, width: 4, load_queue: 64, fill_buffers: 64, store_buffer: 64, wc_buffers: 16, cycle: NS, model }
}

fn miss(kind: Kind, gap: u64, lat: Time) -> Op<Mem> {
    Op::new(kind, gap, (lat, true))
}

fn hit(kind: Kind, gap: u64, lat: Time) -> Op<Mem> {
    Op::new(kind, gap, (lat, false))
}

fn fence(kind: Kind) -> Op<Mem> {
    Op::new(kind, 0, (0, false))
}

/// What a run did: its end, the events it scheduled (one per miss), and
/// each operation's issue time by id.
struct Run {
    end: Time,
    events: u64,
    issued: Vec<(OpId, Kind, Time)>,
}

impl Run {
    /// Issue time of the `n`-th issued operation of `kind` in program order.
    fn at(&self, kind: Kind, n: usize) -> Time {
        let mut v: Vec<_> = self.issued.iter().filter(|x| x.1 == kind).collect();
        v.sort_by_key(|x| x.0);
        v[n].2
    }
}

/// Drive a core through `ops` as a timing engine would: misses complete by
/// events, hits are accounted at issue, and the core runs ahead until the
/// next event.
fn run(p: Params, ops: &[Op<Mem>]) -> Run {
    let mut core = Core::new(p).expect("valid parameters");
    let mut heap: BinaryHeap<Reverse<(Time, OpId)>> = BinaryHeap::new();
    let mut ops = ops.iter();
    let (mut now, mut events) = (0, 0);
    let mut issued = Vec::new();
    for _ in 0..1_000_000 {
        let until = heap.peek().map_or(Time::MAX, |r| r.0 .0);
        match core.next(until) {
            Next::Fetch => match ops.next() {
                Some(&op) => core.push(op, now).expect("the core fetches"),
                None => core.close(),
            },
            Next::Issue { id, kind, at, payload: (lat, is_miss) } => {
                let at = at.max(now);
                let fence = matches!(kind, Kind::Mfence | Kind::Sfence);
                if is_miss && !fence {
                    match core.issue(id, at, None) {
                        Ok(()) => {
                            heap.push(Reverse((at + lat, id)));
                            events += 1;
                        }
                        Err(CoreError::NoFillBuffer) => {
                            let Reverse((t, done)) = heap.pop().expect("a miss in flight");
                            now = t;
                            core.complete(done, t).unwrap();
                            continue;
                        }
                        Err(e) => panic!("{e:?}"),
                    }
                } else {
                    core.issue(id, at, Some(lat)).unwrap();
                }
                issued.push((id, kind, at));
            }
            Next::Wait(_) | Next::Blocked => {
                let Reverse((t, done)) = heap.pop().expect("an event to wait for");
                now = t;
                core.complete(done, t).unwrap();
            }
            Next::Finished => return Run { end: core.end(), events, issued },
        }
    }
    panic!("the run did not finish")
}

#[test]
fn pointer_chase_costs_the_sum_of_its_latencies() {
    let lats = [100 * NS, 30 * NS, 250 * NS, 7 * NS, 90 * NS, 400 * NS];
    let chase: Vec<_> = lats.iter().map(|&l| miss(Kind::Load, 0, l).dep()).collect();
    let r = run(params(Model::Tso), &chase);
    assert_eq!(r.end, lats.iter().sum::<Time>());
    for i in 1..lats.len() {
        assert_eq!(r.at(Kind::Load, i), lats[..i].iter().sum::<Time>(), "load {i} issues when its producer returns");
    }
    // independent, the same loads overlap: the longest dominates
    let free: Vec<_> = lats.iter().map(|&l| miss(Kind::Load, 0, l)).collect();
    let r = run(params(Model::Tso), &free);
    assert!(r.end < 400 * NS + 2 * NS, "{}", r.end);
}

#[test]
fn independent_misses_overlap_up_to_the_fill_buffers() {
    let lat = 100 * NS;
    let n: u64 = 10;
    let loads: Vec<_> = (0..n).map(|_| miss(Kind::Load, 0, lat)).collect();
    // a wide core dispatches all ten in one cycle
    let wide = Params { width: 16, ..params(Model::Rc) };
    for m in [1u32, 3, 4, 10] {
        let r = run(Params { fill_buffers: m, ..wide }, &loads);
        assert_eq!(r.end, n.div_ceil(m as u64) * lat, "{m} fill buffers");
    }
    // the load queue bounds them too
    let r = run(Params { load_queue: 5, ..wide }, &loads);
    assert_eq!(r.end, 2 * lat);
}

#[test]
fn store_buffer_of_one_serialises_stores_under_tso_and_rc_overlaps() {
    let lat = 100 * NS;
    let stores: Vec<_> = (0..8).map(|_| miss(Kind::Store, 0, lat)).collect();
    let wide = Params { width: 16, ..params(Model::Tso) };
    let r = run(Params { store_buffer: 1, ..wide }, &stores);
    assert_eq!(r.end, 8 * lat);
    let r = run(Params { store_buffer: 8, model: Model::Rc, ..wide }, &stores);
    assert_eq!(r.end, lat, "relaxed stores overlap");
    // a larger buffer under TSO still performs them in order, one at a
    // time, but the core goes on: a load behind them issues at once
    let mut ops = stores.clone();
    ops.push(hit(Kind::Load, 0, NS));
    let r = run(Params { store_buffer: 8, ..wide }, &ops);
    assert_eq!(r.end, 8 * lat);
    assert_eq!(r.at(Kind::Load, 0), 0);
    for i in 1..8 {
        assert_eq!(r.at(Kind::Store, i), i as Time * lat, "TSO: store {i} after store {}", i - 1);
    }
    // ...while with a buffer of one the load waits for the stores ahead
    let r = run(Params { store_buffer: 1, ..wide }, &ops);
    assert_eq!(r.at(Kind::Load, 0), 7 * lat);
}

#[test]
fn sfence_waits_for_write_combining_and_mfence_for_the_store_buffer() {
    let p = Params { width: 16, ..params(Model::Tso) };
    // non-temporal stores, an sfence, then a store and a load
    let ops = [
        miss(Kind::WcStore, 0, 100 * NS),
        miss(Kind::WcStore, 0, 300 * NS),
        miss(Kind::WcStore, 0, 200 * NS),
        fence(Kind::Sfence),
        miss(Kind::Store, 0, 50 * NS),
        hit(Kind::Load, 0, NS),
    ];
    let r = run(p, &ops);
    assert_eq!(r.at(Kind::Sfence, 0), 300 * NS, "after every write-combining entry");
    assert_eq!(r.at(Kind::Store, 0), 300 * NS, "a store behind the sfence");
    assert_eq!(r.at(Kind::Load, 0), 0, "loads pass an sfence");
    assert_eq!(r.end, 350 * NS);
    // without the sfence the store goes at once
    let mut free = ops;
    free[3] = Op::new(Kind::Compute, 0, (0, false));
    let r = run(p, &free);
    assert_eq!(r.at(Kind::Store, 0), 0);
    // stores, an mfence, a load
    let ops =
        [miss(Kind::Store, 0, 100 * NS), miss(Kind::Store, 0, 300 * NS), fence(Kind::Mfence), hit(Kind::Load, 0, NS)];
    for model in [Model::Tso, Model::Rc] {
        let r = run(Params { model, ..p }, &ops);
        let drained = if model == Model::Tso { 400 * NS } else { 300 * NS };
        assert_eq!(r.at(Kind::Mfence, 0), drained, "{model:?}: after the store buffer drained");
        assert_eq!(r.at(Kind::Load, 0), drained, "{model:?}: a load behind an mfence");
        // an sfence does not hold the load
        let mut s = ops;
        s[2] = fence(Kind::Sfence);
        assert_eq!(run(Params { model, ..p }, &s).at(Kind::Load, 0), 0);
    }
}

#[test]
fn computation_costs_its_width_and_a_miss_stalls_once_the_rob_fills() {
    let (w, rob) = (4u32, 16u64);
    let p = Params { width: w, rob: rob as u32, ..params(Model::Tso) };
    for k in [1u64, 4, 10, 97] {
        let r = run(p, &[Op::new(Kind::Compute, k, (0, false))]);
        assert_eq!(r.end, k.div_ceil(w as u64) * NS, "{k} instructions");
        assert_eq!(r.events, 0);
    }
    // hits do not block retirement: K instructions between hitting loads
    // cost ceil((K + 1) / W) cycles each (the load is an instruction)
    let ops: Vec<_> = (0..50).map(|_| hit(Kind::Load, 7, 0)).collect();
    let r = run(p, &ops);
    assert_eq!(r.end, 50 * 8 / w as u64 * NS);
    assert_eq!(r.events, 0, "hits are accounted, not scheduled");
    // a long miss: dispatch goes on for rob - 1 instructions past it, then
    // waits for the miss to retire
    let lat = 1000 * NS;
    let k = 100;
    let r = run(p, &[miss(Kind::Load, 0, lat), Op::new(Kind::Compute, k, (0, false))]);
    assert_eq!(r.end, lat + (k - (rob - 1)).div_ceil(w as u64) * NS);
    let big = run(Params { rob: 256, ..p }, &[miss(Kind::Load, 0, lat), Op::new(Kind::Compute, k, (0, false))]);
    assert_eq!(big.end, lat, "a large window hides the computation under the miss");
    // the instruction `rob` past the miss is the first to wait
    let at = |gap| run(p, &[miss(Kind::Load, 0, lat), hit(Kind::Load, gap, 0)]).at(Kind::Load, 1);
    assert_eq!(at(rob - 2), (rob - 1) / w as u64 * NS, "instruction rob - 1 past the miss dispatches");
    assert_eq!(at(rob - 1), lat, "instruction rob past the miss waits");
}

#[test]
fn release_and_acquire_order_under_rc_only() {
    let p = Params { width: 16, ..params(Model::Rc) };
    let ops = [
        miss(Kind::Store, 0, 100 * NS),
        miss(Kind::Load, 0, 200 * NS).ordered(Order::Acquire),
        miss(Kind::Load, 0, 50 * NS),
        miss(Kind::Store, 0, 10 * NS).ordered(Order::Release),
    ];
    let r = run(p, &ops);
    assert_eq!(r.at(Kind::Load, 1), 200 * NS, "a load waits for an older acquire");
    assert_eq!(r.at(Kind::Store, 1), 250 * NS, "a release waits for everything older");
    // RMWs under TSO wait for the store buffer to drain
    let ops = [miss(Kind::Store, 0, 100 * NS), miss(Kind::Rmw, 0, 10 * NS), hit(Kind::Load, 0, 0)];
    let r = run(Params { model: Model::Tso, ..p }, &ops);
    assert_eq!(r.at(Kind::Rmw, 0), 100 * NS);
    assert_eq!(r.at(Kind::Load, 0), 110 * NS, "an RMW is a fence under TSO");
    let r = run(p, &ops);
    assert_eq!(r.at(Kind::Rmw, 0), 0, "a relaxed RMW under RC does not wait");
}

#[test]
fn bad_parameters_are_errors() {
    let ok = Params::default();
    assert!(ok.validate().is_ok());
    for (p, field) in [
        (Params { rob: 0, ..ok }, "rob"),
        (Params { width: 0, ..ok }, "width"),
        (Params { width: 300, ..ok }, "width"),
        (Params { load_queue: 0, ..ok }, "load_queue"),
        (Params { fill_buffers: 0, ..ok }, "fill_buffers"),
        (Params { store_buffer: u32::MAX, ..ok }, "store_buffer"),
        (Params { wc_buffers: 0, ..ok }, "wc_buffers"),
        (Params { cycle: 0, ..ok }, "cycle"),
    ] {
        let e = Core::<()>::new(p).expect_err(field);
        assert_eq!(e.field, field);
        assert!(e.to_string().starts_with(&format!("core.{field}: ")), "{e}");
    }
    // a driver's mistakes are errors too
    let mut c = Core::new(Params { fill_buffers: 1, ..ok }).unwrap();
    assert_eq!(c.next(0), Next::Fetch);
    c.push(Op::new(Kind::Load, 0, ()), 0).unwrap();
    assert_eq!(c.push(Op::new(Kind::Load, 0, ()), 0), Ok(()));
    assert_eq!(c.complete(0, 5), Err(CoreError::Unknown(0)));
    c.issue(0, 0, None).unwrap();
    assert_eq!(c.issue(1, 0, None), Err(CoreError::NoFillBuffer));
    assert_eq!(c.issue(7, 0, None), Err(CoreError::Unknown(7)));
}

mod random {
    //! Random programs on random small cores: every run finishes, and no
    //! operation issues before what it must wait for.

    use super::*;
    use proptest::prelude::*;

    fn kind() -> impl Strategy<Value = Kind> {
        prop_oneof![
            6 => Just(Kind::Load),
            4 => Just(Kind::Store),
            1 => Just(Kind::Rmw),
            1 => Just(Kind::WcStore),
            1 => Just(Kind::Mfence),
            1 => Just(Kind::Sfence),
            1 => Just(Kind::Compute),
        ]
    }

    fn op() -> impl Strategy<Value = Op<Mem>> {
        (kind(), 0u64..12, any::<bool>(), 0u8..3, 0u64..300, any::<bool>()).prop_map(|(k, gap, dep, o, lat, m)| {
            let order = [Order::Relaxed, Order::Acquire, Order::Release][o as usize];
            Op { kind: k, gap, dep, order, payload: (lat * NS, m) }
        })
    }

    fn params() -> impl Strategy<Value = Params> {
        (1u32..20, 1u32..5, 1u32..6, 1u32..5, 1u32..5, 1u32..4, any::<bool>()).prop_map(
            |(rob, width, lq, fb, sb, wc, tso)| Params {
                rob: rob.max(width),
                width,
                load_queue: lq,
                fill_buffers: fb,
                store_buffer: sb,
                wc_buffers: wc,
                cycle: NS,
                model: if tso { Model::Tso } else { Model::Rc },
            },
        )
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]
        #[test]
        fn operations_issue_after_what_they_wait_for(p in params(), ops in prop::collection::vec(op(), 1..40)) {
            let r = run(p, &ops);
            // the id of each operation, and its issue and completion times
            let mut ids = Vec::new();
            let mut seq = 0;
            for o in &ops {
                seq += o.gap;
                if o.kind != Kind::Compute {
                    ids.push(Some(seq));
                    seq += 1;
                } else {
                    ids.push(None);
                }
            }
            let times: Vec<Option<(Time, Time)>> = ids
                .iter()
                .zip(&ops)
                .map(|(id, o)| {
                    id.map(|id| {
                        let at = r.issued.iter().find(|x| x.0 == id).expect("every operation issued").2;
                        (at, at + o.payload.0)
                    })
                })
                .collect();
            let mut last_load: Option<usize> = None;
            for (k, o) in ops.iter().enumerate() {
                let Some((at, _)) = times[k] else { continue };
                let done = |j: usize| times[j].map_or(0, |t| t.1);
                let older = 0..k;
                match o.kind {
                    Kind::Load | Kind::Rmw => {
                        if o.dep {
                            if let Some(j) = last_load {
                                prop_assert!(at >= done(j), "op {k} before its producer {j}");
                            }
                        }
                        for j in older.clone() {
                            let barrier = ops[j].kind == Kind::Mfence
                                || (ops[j].kind == Kind::Rmw && p.model == Model::Tso)
                                || (p.model == Model::Rc && ops[j].order == Order::Acquire
                                    && matches!(ops[j].kind, Kind::Load | Kind::Rmw));
                            if barrier {
                                prop_assert!(at >= done(j), "op {k} passed barrier {j}");
                            }
                        }
                        last_load = Some(k);
                    }
                    Kind::Mfence | Kind::Sfence => {
                        for j in older.clone() {
                            let all = o.kind == Kind::Mfence
                                || matches!(ops[j].kind, Kind::Store | Kind::WcStore | Kind::Sfence);
                            if all {
                                prop_assert!(at >= done(j), "fence {k} before {j}");
                            }
                        }
                    }
                    Kind::Store => {
                        for j in older.clone() {
                            let before = matches!(ops[j].kind, Kind::Load | Kind::Rmw | Kind::Mfence | Kind::Sfence)
                                || (p.model == Model::Tso && ops[j].kind == Kind::Store);
                            if before {
                                prop_assert!(at >= done(j), "store {k} before {j}");
                            }
                        }
                    }
                    Kind::WcStore | Kind::Compute => {}
                }
            }
            let last = times.iter().flatten().map(|t| t.1).max().unwrap_or(0);
            prop_assert!(r.end >= last);
        }
    }
}

/// A miss of the first level whose latency is known at issue (a hit in a
/// lower level, `Access::Fill`) holds a fill buffer until its data
/// arrives, with no event; a first-level hit holds none; a miss found late
/// (`Access::LateMiss`) takes one past the bound.
#[test]
fn a_lower_level_hit_holds_a_fill_buffer_for_its_latency() {
    use fabricsim::agents::core::Access;
    let p = Params { fill_buffers: 1, ..params(Model::Rc) };
    let mut core: Core<u32> = Core::new(p).unwrap();
    for i in 0..4 {
        core.push(Op::new(Kind::Load, 0, i), 0).unwrap();
    }
    core.at(0);
    let id = |core: &mut Core<u32>| match core.next_from(Time::MAX, fabricsim::agents::core::Queues::Window) {
        Next::Issue { id, .. } => id,
        n => panic!("{n:?}"),
    };
    let a = id(&mut core);
    core.issue_as(a, 0, Access::Fill(10 * NS)).unwrap();
    assert!(!core.fill_free());
    assert_eq!(core.fill_frees_at(), Some(10 * NS));
    let b = id(&mut core);
    assert_eq!(core.issue_as(b, NS, Access::Miss), Err(CoreError::NoFillBuffer));
    assert_eq!(core.issue_as(b, NS, Access::Fill(NS)), Err(CoreError::NoFillBuffer));
    // a first-level hit needs none
    core.issue_as(b, NS, Access::Hit(NS)).unwrap();
    let c = id(&mut core);
    core.at(10 * NS);
    assert!(core.fill_free());
    core.issue_as(c, 10 * NS, Access::Miss).unwrap();
    let d = id(&mut core);
    core.issue_as(d, 10 * NS, Access::LateMiss).unwrap();
    assert_eq!((core.stats().misses, core.stats().late_overruns, core.stats().hits), (2, 1, 2));
    core.complete(c, 20 * NS).unwrap();
    core.complete(d, 20 * NS).unwrap();
    core.at(20 * NS);
    assert!(core.fill_free());
}
