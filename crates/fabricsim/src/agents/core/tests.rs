//! The counted search (`Core::best` with `waiting` and `barriers`) against
//! the full scan it replaced, on random programs and driver choices.

use super::*;
use crate::engine::rng::Stream;

/// The search before the counters: every waiting entry of the queues, each
/// checked against every older entry of every queue.
fn best_reference<T: Copy>(c: &Core<T>, queues: Queues) -> Option<(Time, Q, usize)> {
    let ready = |y: &Entry<T>| -> Option<Time> {
        let mut t = y.lo;
        for buf in [&c.window, &c.sb, &c.wc] {
            for x in buf.iter() {
                if x.seq >= y.seq {
                    break;
                }
                if waits_for(x, y, c.p.model) {
                    match x.state {
                        State::Done(d) => t = t.max(d),
                        _ => return None,
                    }
                }
            }
        }
        Some(t)
    };
    let mut best: Option<(Time, Q, usize)> = None;
    let qs = [(Q::Window, &c.window), (Q::Sb, &c.sb), (Q::Wc, &c.wc)];
    let qs = match queues {
        Queues::Window => &qs[..1],
        Queues::Buffers => &qs[1..],
        Queues::All => &qs[..],
    };
    for &(q, buf) in qs {
        for (i, y) in buf.iter().enumerate() {
            if y.state != State::Waiting {
                continue;
            }
            if let Some(t) = ready(y) {
                if best.is_none_or(|b| t < b.0) {
                    best = Some((t, q, i));
                }
            }
        }
    }
    best
}

#[test]
fn the_counted_search_matches_the_full_scan() {
    let kinds =
        [Kind::Load, Kind::Load, Kind::Store, Kind::Rmw, Kind::WcStore, Kind::Mfence, Kind::Sfence, Kind::Compute];
    let orders = [Order::Relaxed, Order::Relaxed, Order::Acquire, Order::Release];
    let (mut compared, mut several) = (0u64, 0u64);
    for seed in 0..60u64 {
        let mut r = Stream::new(seed, 35);
        let model = if seed % 2 == 0 { Model::Tso } else { Model::Rc };
        let p = Params {
            rob: 8 + r.below(24) as u32,
            width: 1 + r.below(4) as u32,
            load_queue: 2 + r.below(8) as u32,
            fill_buffers: 1 + r.below(6) as u32,
            store_buffer: 1 + r.below(6) as u32,
            wc_buffers: 1 + r.below(3) as u32,
            cycle: 250,
            model,
        };
        let mut c: Core<u32> = Core::new(p).unwrap();
        let mut now: Time = 0;
        let mut out: Vec<OpId> = Vec::new();
        for n in 0..2000u32 {
            c.at(now);
            c.dispatch();
            for qs in [Queues::Window, Queues::Buffers, Queues::All] {
                assert_eq!(c.best(qs), best_reference(&c, qs), "seed {seed}, step {n}, {qs:?}");
                compared += 1;
            }
            assert!(c.counts_hold(), "seed {seed}, step {n}");
            several += u64::from(c.waiting.iter().sum::<u32>() > 1);
            match c.next(now) {
                Next::Fetch => {
                    let mut op =
                        Op::new(kinds[r.below(8) as usize], r.below(6), n).ordered(orders[r.below(4) as usize]);
                    if r.below(3) == 0 {
                        op = op.dep();
                    }
                    c.push(op, now).unwrap();
                }
                Next::Issue { id, .. } => {
                    let access = match r.below(4) {
                        0 => Access::Hit(250 * r.below(8)),
                        1 if c.fill_free() => Access::Fill(250 * r.below(12)),
                        _ if c.fill_free() => Access::Miss,
                        _ => Access::Hit(250),
                    };
                    c.issue_as(id, now, access).unwrap();
                    let (q, i) = c.find(id).unwrap();
                    if c.queue(q)[i].state == State::Out {
                        out.push(id);
                    }
                }
                Next::Wait(t) => now = t,
                Next::Blocked | Next::Finished => now += 250,
            }
            // completions in any order, at times on and off the cycle grid
            if !out.is_empty() && r.below(3) == 0 {
                let id = out.swap_remove(r.below(out.len() as u64) as usize);
                now += 125 * r.below(6);
                c.complete(id, now).unwrap();
            }
        }
    }
    // the searches met more than one waiting entry (ties and orders to keep)
    assert!(compared > 300_000 && several > 1_000, "{compared} searches, {several} with several waiting");
}
