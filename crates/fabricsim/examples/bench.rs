//! `cargo run --release --example bench [-- --quick]`: the figures of `fabricsim bench --json`.
fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    println!("{}", fabricsim::bench::run_all(quick).expect("benchmarks run"));
}
