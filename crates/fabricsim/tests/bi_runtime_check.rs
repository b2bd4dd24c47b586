//! The BI runtime checked (docs/design/bi.md §3.5): the base model keeps
//! every invariant under two skews and two periods, and each mutant gives a
//! counterexample of the kind it breaks.

use fabricsim::agents::bi::check::{mutant_by_name, BiRuntimeCheck};
use fabricsim::check::{explore, Options};

fn run(slots: usize, skew: u8, period: u8, horizon: u8, mutant: Option<&str>) -> fabricsim::check::Report {
    let m = mutant.map(|m| mutant_by_name(m).expect("a mutant"));
    let p = BiRuntimeCheck::new(slots, skew, period, horizon, m);
    let max = std::env::var("MAXS").ok().and_then(|s| s.parse().ok());
    let opts = Options { check_deadlock: false, threads: 0, max_states: max, ..Options::default() };
    let r = explore(&p, &opts, &mut |_| {});
    eprintln!(
        "{}: {} states, depth {}, complete {}, {:.1} s, {}",
        r.protocol,
        r.states,
        r.depth,
        r.complete,
        r.seconds,
        r.violation.as_ref().map_or("ok".to_string(), |v| format!(
            "{}: {} ({} steps)",
            v.kind,
            v.detail,
            v.steps.len()
        ))
    );
    r
}

#[test]
fn explore_sizes() {
    let k: usize = std::env::var("K").ok().and_then(|s| s.parse().ok()).unwrap_or(2);
    let h: u8 = std::env::var("H").ok().and_then(|s| s.parse().ok()).unwrap_or(4);
    let skew: u8 = std::env::var("SKEW").ok().and_then(|s| s.parse().ok()).unwrap_or(0);
    let p: u8 = std::env::var("P").ok().and_then(|s| s.parse().ok()).unwrap_or(2);
    let m = std::env::var("MUT").ok();
    let r = run(k, skew, p, h, m.as_deref());
    if let Some(v) = &r.violation {
        if std::env::var("TRACE").is_ok() {
            for s in &v.steps {
                eprintln!("{:3} {} {}", s.step, s.agent, s.event);
            }
        }
    }
}
