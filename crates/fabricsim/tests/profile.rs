//! `--profile` (docs/performance.md, "Where the time goes"): events by kind
//! and the share of wall time by part, on both engines, only when asked.

use fabricsim::sim::profile::Profile;
use fabricsim::{config, run_spec, run_spec_profiled, Format, Outcome, RunResult};

fn example(name: &str) -> String {
    let p = format!("{}/../../examples/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{p}: {e}"))
}

fn run(toml: &str, overrides: &[&str], profile: bool) -> RunResult {
    let o: Vec<String> = overrides.iter().map(|s| s.to_string()).collect();
    let spec = config::resolve(toml, "profile.toml", Format::Toml, &o, None).unwrap_or_else(|e| panic!("{e}"));
    let r = match profile {
        true => run_spec_profiled(&spec, &mut |_| true),
        false => run_spec(&spec, &mut |_| true),
    };
    assert_eq!(r.outcome, Outcome::Completed, "{:?}", r.warnings);
    r
}

/// MESI, 64 cores with DRAM homes, a few hundred requests per core.
const MESI: [&str; 2] = ["workload.requests=300", "workload.warmup=30"];

fn share(p: &Profile, part: &str) -> f64 {
    p.shares.iter().find(|s| s.0 == part).unwrap_or_else(|| panic!("no part {part}")).1
}

fn count(p: &Profile, kind: &str) -> u64 {
    p.events.iter().find(|e| e.0 == kind).unwrap_or_else(|| panic!("no kind {kind}")).1
}

/// What every profile must satisfy against its run.
fn consistent(r: &RunResult, engine: &str) -> Profile {
    let p = r.profile.clone().expect("a profiled run has a profile");
    assert_eq!(p.engine, engine);
    assert_eq!(p.total_events(), r.events, "events by kind sum to the run's events: {:?}", p.events);
    let sum: f64 = p.shares.iter().map(|s| s.1).sum();
    assert!((sum - 1.0).abs() < 1e-9, "shares sum to {sum}: {:?}", p.shares);
    assert!(p.shares.iter().all(|s| (0.0..=1.0).contains(&s.1)), "{:?}", p.shares);
    assert!(p.events_per_s() > 0.0 && p.wall_s > 0.0);
    // and summary.json has it, its shares rounded
    let v: serde_json::Value = serde_json::from_str(&r.summary_json("test")).unwrap();
    let j = &v["profile"];
    assert_eq!(j["events_total"], r.events);
    let rounded: f64 = j["wall_share"].as_object().unwrap().values().map(|x| x.as_f64().unwrap()).sum();
    assert!((rounded - 1.0).abs() < 1e-3, "{rounded}");
    assert!(r.text().contains("M events/s") && r.text().contains("wall %"), "{}", r.text());
    p
}

/// The summary without what the profile may change: wall time and the profile.
fn simulated(r: &RunResult) -> String {
    let mut v: serde_json::Value = serde_json::from_str(&r.summary_json("test")).unwrap();
    let o = v.as_object_mut().unwrap();
    o.remove("wall_s");
    o.remove("profile");
    let mut all = serde_json::to_string(&v).unwrap();
    for (_, t) in r.tables() {
        all += &t;
    }
    all
}

#[test]
fn a_protocol_run_counts_every_event_by_kind_and_splits_its_wall_time() {
    let r = run(&example("mesi_64core.toml"), &MESI, true);
    let p = consistent(&r, "protocol");
    for kind in ["fabric.arrive", "step", "leave", "served", "dram_wake", "dram_done"] {
        assert!(count(&p, kind) > 0, "{kind}: {:?}", p.events);
    }
    // the homes read DDR5 through the DRAM model: time goes there
    assert!(share(&p, "dram") > 0.0, "{:?}", p.shares);
    assert!(share(&p, "fabric") > 0.0 && share(&p, "protocol") > 0.0, "{:?}", p.shares);
}

#[test]
fn a_request_response_run_has_a_profile_too() {
    let r = run(&example("cxl_expander.toml"), &["workload.requests=2000"], true);
    let p = consistent(&r, "request_response");
    assert!(count(&p, "issue") > 0 && count(&p, "complete") > 0 && count(&p, "fabric.arrive") > 0, "{:?}", p.events);
}

#[test]
fn fixed_latency_memories_cost_no_dram_time() {
    let toml = example("mesi_64core.toml")
        .replace("model = \"dram\"", "model = \"fixed\"")
        .replace("dram = \"DDR5-4800\"", "");
    let r = run(&toml, &MESI, true);
    let p = consistent(&r, "protocol");
    assert_eq!(share(&p, "dram"), 0.0, "{:?}", p.shares);
    assert_eq!(count(&p, "dram_wake") + count(&p, "dram_done"), 0);
}

#[test]
fn private_levels_are_charged_to_the_caches() {
    let r = run(&example("mesi_levels.toml"), &["workload.requests=300", "workload.warmup=30"], true);
    let p = consistent(&r, "protocol");
    assert!(share(&p, "caches") > 0.0, "{:?}", p.shares);
}

#[test]
fn without_profile_there_is_no_profile_and_with_it_the_same_simulation() {
    let toml = example("mesi_64core.toml");
    let plain = run(&toml, &MESI, false);
    assert!(plain.profile.is_none());
    let v: serde_json::Value = serde_json::from_str(&plain.summary_json("test")).unwrap();
    assert!(v.get("profile").is_none());
    assert!(!plain.text().contains("wall %"));
    let profiled = run(&toml, &MESI, true);
    assert_eq!(simulated(&plain), simulated(&profiled));
    assert_eq!(plain.events, profiled.events);
    // the request does not outlive its run
    assert!(run(&toml, &MESI, false).profile.is_none());
    let rr = run(&example("cxl_expander.toml"), &["workload.requests=2000"], false);
    assert!(rr.profile.is_none());
}

#[test]
fn event_counts_by_kind_are_deterministic() {
    let toml = example("mesi_64core.toml");
    let a = run(&toml, &MESI, true).profile.unwrap();
    let b = run(&toml, &MESI, true).profile.unwrap();
    assert_eq!(a.events, b.events);
    let toml = example("cxl_expander.toml");
    let a = run(&toml, &["workload.requests=2000"], true).profile.unwrap();
    let b = run(&toml, &["workload.requests=2000"], true).profile.unwrap();
    assert_eq!(a.events, b.events);
}
