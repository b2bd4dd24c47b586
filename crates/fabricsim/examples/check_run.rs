//! `cargo run --release --example check_run -- CONFIG [key=value ...]`: run
//! one `[check]` configuration (the same as `fabricsim check CONFIG --set
//! check.key=value`) and print its report as one JSON line, for timing the
//! checker under `/usr/bin/time -v` without Python.
fn main() {
    let mut args = std::env::args().skip(1);
    let path = args.next().expect("usage: check_run CONFIG [key=value ...]");
    let overrides: Vec<String> = args.map(|a| format!("check.{a}")).collect();
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
