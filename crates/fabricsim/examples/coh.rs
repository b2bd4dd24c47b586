use fabricsim::agents::coherence::directory::{Directory, Variant};
use fabricsim::check::{explore, Options};
fn main() {
    let a: Vec<usize> = std::env::args().skip(1).map(|x| x.parse().unwrap()).collect();
    let p = Directory::free(if a[0] == 0 { Variant::Msi } else { Variant::Mesi }, a[1], a[2], a[3], a[4])
        .with_symmetry(a.get(6).is_some_and(|&x| x == 1));
    let r = explore(
        &p,
        &Options { check_deadlock: true, max_states: Some(a[5] as u64), ..Default::default() },
        &mut |_| {},
    );
    println!(
        "{} states {} trans {:.2}s {:.0}/s complete {} depth {} rss {}MB",
        r.states,
        r.transitions,
        r.seconds,
        r.states_per_s(),
        r.complete,
        r.depth,
        r.peak_rss_kb / 1024
    );
    if r.violation.is_some() {
        println!("{}", r.trace_text());
    }
}
