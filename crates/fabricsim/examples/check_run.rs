//! `cargo run --release --example check_run -- CONFIG [KEY=VALUE ...]`: run
//! one check configuration (the same as `fabricsim check CONFIG --set ...`)
//! and print its report as one JSON line, for timing the checker under
//! `/usr/bin/time -v` without Python. A bare key is a `[check]` key
//! (`mutant=no-version-check` is `check.mutant=no-version-check`); a dotted one is taken
//! as it is, so the family's keys are reached by their path
//! (`protocol.bi_runtime.writer_ticks=2`, `protocol.name=gcs`).
fn main() {
    let mut args = std::env::args().skip(1);
    let path = args.next().expect("usage: check_run CONFIG [KEY=VALUE ...]");
    let overrides: Vec<String> = args.map(|a| qualified(&a)).collect();
    let text = std::fs::read_to_string(&path).expect("readable configuration");
    match fabricsim::config::check_file::run(&text, &path, fabricsim::config::Format::Toml, &overrides) {
        Ok(r) => {
            let mut v = r.to_json();
            v["violation"] = serde_json::Value::Null;
            println!("{v}");
            if r.report.violation.is_some() {
                eprintln!("{}", r.report.trace_text());
            }
        }
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(2);
        }
    }
}

/// `arg` as a `--set` override: `check.` before a bare key. Only the key
/// is looked at, so a value with a dot (`disk=/tmp/x.states`) stays a
/// `[check]` key's.
fn qualified(arg: &str) -> String {
    let key = arg.split_once('=').map_or(arg, |(k, _)| k);
    if key.contains('.') {
        arg.to_string()
    } else {
        format!("check.{arg}")
    }
}
