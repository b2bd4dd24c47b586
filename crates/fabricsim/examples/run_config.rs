//! Run a configuration file from Rust: `cargo run --release --example run_config -- FILE [KEY=VALUE...] [--profile]`.
fn main() {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    // --profile: where the time goes (docs/performance.md)
    let profile = args.iter().any(|a| a == "--profile");
    args.retain(|a| a != "--profile");
    let Some(path) = args.first() else {
        eprintln!("usage: run_config FILE [KEY=VALUE...]");
        std::process::exit(2);
    };
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| {
        eprintln!("error: {path}: {e}");
        std::process::exit(2)
    });
    let run = fabricsim::config::resolve(&text, path, fabricsim::Format::Toml, &args[1..], None)
        .map(|spec| fabricsim::run_spec_with(&spec, profile, &mut |_| true));
    match run {
        Ok(r) => {
            print!("{}", r.text());
            println!("{}", r.summary_json(fabricsim::VERSION));
        }
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(2);
        }
    }
}
