//! Write generated litmus tests (`programs/generate.rs`) as herd C files:
//! `cargo run --release -p fabricsim --example litmus_generate -- OUTDIR [MAX_EDGES]`.
//!
//! Every cycle of at most MAX_EDGES (default 4) edges of Rfe, Fre, Wse, Pod,
//! Pos and Fenced (seq_cst and acq_rel fences), at most four threads and
//! locations, each with relaxed, release/acquire, seq_cst and one mixed
//! annotation: the tests `tests/litmus_gen.rs` checks, for
//! `benchmarks/herd_compare.py` to run on herd7 too.

use fabricsim::programs::generate::{cycles, Annotation, Edge};
use fabricsim::programs::Order;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(out) = args.first() else {
        eprintln!("usage: litmus_generate OUTDIR [MAX_EDGES]");
        std::process::exit(2);
    };
    let max: usize = match args.get(1).map(|s| s.parse()) {
        None => 4,
        Some(Ok(n)) if (2..=8).contains(&n) => n,
        Some(_) => {
            eprintln!("MAX_EDGES is a number from 2 to 8");
            std::process::exit(2);
        }
    };
    if let Err(e) = std::fs::create_dir_all(out) {
        eprintln!("{out}: {e}");
        std::process::exit(1);
    }
    let voc = Edge::vocabulary(&[Order::SeqCst, Order::AcqRel]);
    let mut n = 0;
    for (i, c) in cycles(&voc, max, 4, 4).iter().enumerate() {
        for ann in [Annotation::Relaxed, Annotation::RelAcq, Annotation::SeqCst, Annotation::Mixed(i as u64)] {
            let path = format!("{out}/{}+{}.litmus", c.name(), ann.name());
            if let Err(e) = std::fs::write(&path, c.to_c(ann)) {
                eprintln!("{path}: {e}");
                std::process::exit(1);
            }
            n += 1;
        }
    }
    println!("{n} tests in {out}");
}
