//! `cargo run --release --example bench [-- --quick]`: the figures of `fabricsim bench --json`.
//! `-- --protocol [REQUESTS]`: only the protocol engine's (mesi_64core, 5000 requests per core by default).
fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if let Some(i) = args.iter().position(|a| a == "--protocol") {
        let requests = args.get(i + 1).map_or(5000, |n| n.parse().expect("a number of requests per core"));
        let v = fabricsim::bench::protocol_mesi_64(requests);
        println!("{}", serde_json::to_string_pretty(&v).expect("json"));
        return;
    }
    let quick = args.iter().any(|a| a == "--quick");
    println!("{}", fabricsim::bench::run_all(quick).expect("benchmarks run"));
}
