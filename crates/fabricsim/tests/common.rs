#![allow(dead_code)]
use fabricsim::{config, run_spec, Format, Outcome, RunResult, System};

pub fn run(toml: &str) -> RunResult {
    run_with(toml, &[])
}

pub fn run_with(toml: &str, overrides: &[&str]) -> RunResult {
    let o: Vec<String> = overrides.iter().map(|s| s.to_string()).collect();
    let spec = config::resolve(toml, "test.toml", Format::Toml, &o, None).unwrap_or_else(|e| panic!("{e}"));
    System::build(&spec).run(&mut |_| true)
}

pub fn completed(r: &RunResult) {
    assert_eq!(r.outcome, Outcome::Completed, "{:?}", r.warnings);
}

/// Direction `from -> to` of the link stats.
pub fn link<'a>(r: &'a RunResult, from: &str, to: &str) -> &'a fabricsim::fabric::LinkStats {
    &r.links.iter().find(|l| l.1 == from && l.2 == to).unwrap_or_else(|| panic!("no link {from}->{to}")).4
}

pub fn error(toml: &str, overrides: &[&str]) -> String {
    let o: Vec<String> = overrides.iter().map(|s| s.to_string()).collect();
    match config::resolve(toml, "bad.toml", Format::Toml, &o, None) {
        Ok(_) => panic!("configuration was accepted"),
        Err(e) => e.to_string(),
    }
}

/// A configuration with a `[protocol]` run to completion, with no warning.
pub fn run_protocol(toml: &str) -> RunResult {
    let spec = config::resolve(toml, "<test>", Format::Toml, &[], None).unwrap_or_else(|e| panic!("{e}"));
    let r = run_spec(&spec, &mut |_| true);
    assert_eq!(r.outcome, Outcome::Completed, "{:?}", r.warnings);
    assert!(r.warnings.is_empty(), "{:?}", r.warnings);
    r
}
