//! Counterexamples read in each protocol's own words (issue 34): no
//! statistics or benchmark state, sets as sets of named agents, wait
//! queues as lists of blades, nothing left in its initial state.

use fabricsim::config::check_file::run;
use fabricsim::config::Format;

fn trace(example: &str, mutant: &str) -> String {
    let path = format!("{}/../../examples/check/{example}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap();
    let r = run(&text, &path, Format::Toml, &[format!("check.mutant=\"{mutant}\"")]).unwrap().report;
    assert!(r.violation.is_some(), "{example} + {mutant} was not caught");
    r.trace_text()
}

/// No state line (`before:`, `after:`) holds any of `noise` or a debug
/// structure's marks (messages keep their fields' names).
fn no_noise(text: &str, noise: &[&str]) {
    let states: Vec<&str> =
        text.lines().map(str::trim_start).filter(|l| l.starts_with("before:") || l.starts_with("after:")).collect();
    assert!(!states.is_empty(), "{text}");
    for n in ["stats", "Stats", "Some(", "None", "[0, 0, 0, 0]", ": {"].iter().chain(noise) {
        for l in &states {
            assert!(!l.contains(n), "{n:?} in {l:?}\n{text}");
        }
    }
}

#[test]
fn cord_states_read_as_epochs_and_tables() {
    let t = trace("cord.toml", "no-counter-check");
    assert!(t.contains("epoch 0") && t.contains("relaxed stores this epoch {dir0: 1}"), "{t}");
    no_noise(&t, &["Proc {", "Dir {", "EpochTable", "ep: 0, counters"]);
}

#[test]
fn gcs_states_read_as_queues_and_blade_sets() {
    let t = trace("gcs.toml", "no-version-check");
    assert!(t.contains("copies at {blade") && t.contains("queue at blade"), "{t}");
    assert!(t.contains("waiting: thread"), "{t}");
    no_noise(&t, &["Queue(", "BLine {", "DEntry {", "sharers:"]);
}

#[test]
fn bi_states_read_as_lines_and_core_sets() {
    let t = trace("bi_coherent.toml", "home-forgets-sharer");
    assert!(t.contains("line 0 E=0") && t.contains("owner core 0"), "{t}");
    no_noise(&t, &["Run {", "Core {", "LLine {", "HLine {", "phase"]);
}
