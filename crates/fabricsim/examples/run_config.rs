//! Run a configuration file from Rust: `cargo run --release --example run_config -- FILE [KEY=VALUE...]`.
fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(path) = args.first() else {
        eprintln!("usage: run_config FILE [KEY=VALUE...]");
        std::process::exit(2);
    };
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| {
        eprintln!("error: {path}: {e}");
        std::process::exit(2)
    });
    match fabricsim::run_text(&text, path, fabricsim::Format::Toml, &args[1..], None, &mut |_| true) {
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
