//! The Murphi export (issue 36, item 5): a table written as a Murphi
//! model and checked by Rumur gives exactly fabricsim's counts, and a
//! mutant's model fails in Rumur too. The tests that run Rumur are
//! skipped, with a message, where `rumur` or `cc` is absent (CI installs
//! Rumur: .ci/run).

use std::path::PathBuf;
use std::process::Command;

use fabricsim::agents::table::murphi::{export, Options as Murphi, RUMUR_FLAGS};
use fabricsim::agents::table::{Sizes, Table};
use fabricsim::check::{explore, Options};

fn german_text() -> String {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../examples/protocols/german.tables");
    std::fs::read_to_string(path).unwrap()
}

fn table(text: &str) -> Table {
    Table::parse(text, "german.tables").unwrap_or_else(|e| panic!("{e}"))
}

fn sizes(caches: usize) -> Sizes {
    Sizes::new(caches, 1, 2)
}

/// What Rumur's verifier reported.
#[derive(Debug)]
struct Rumur {
    states: u64,
    rules: u64,
    /// The first error's message, if it found one.
    error: Option<String>,
    /// Rules fired in its error trace.
    trace: usize,
}

fn have(tool: &str) -> bool {
    Command::new(tool).arg("--version").output().is_ok_and(|o| o.status.success())
}

/// Generate, compile and run Rumur's verifier of `model`; None (skipped,
/// said on stdout) without rumur or a C compiler.
fn rumur(model: &str, tag: &str, opt: &str, extra: &[&str]) -> Option<Rumur> {
    for tool in ["rumur", "cc"] {
        if !have(tool) {
            println!("SKIPPED: `{tool}` is not installed (apt-get install rumur gcc): no Rumur cross-check");
            return None;
        }
    }
    let dir = std::env::temp_dir().join(format!("fabricsim-murphi-{}-{tag}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (m, c, x) = (dir.join("model.m"), dir.join("model.c"), dir.join("model"));
    std::fs::write(&m, model).unwrap();
    let run = |cmd: &mut Command| {
        let o = cmd.output().unwrap_or_else(|e| panic!("{cmd:?}: {e}"));
        assert!(o.status.success(), "{cmd:?}: {}", String::from_utf8_lossy(&o.stderr));
    };
    // one thread: the machine is shared; the counts do not depend on it
    let mut gen = Command::new("rumur");
    gen.args(RUMUR_FLAGS.split(' '))
        .args(extra)
        .args(["--threads", "1", "--colour", "off", "--output"])
        .arg(&c)
        .arg(&m);
    run(&mut gen);
    let mut cc = Command::new("cc");
    cc.args([opt, "-pthread"]);
    if cfg!(target_arch = "x86_64") {
        cc.arg("-mcx16"); // Rumur's verifier needs 16-byte compare-and-swap
    }
    run(cc.arg(&c).arg("-o").arg(&x));
    let o = Command::new(&x).output().unwrap();
    let out = String::from_utf8_lossy(&o.stdout).to_string();
    // the summary's "3390 states, 9912 rules fired in 0s." (progress lines say "... rules fired" too)
    let line = out.lines().rfind(|l| l.contains(" rules fired")).unwrap_or_else(|| panic!("no counts in:\n{out}"));
    let n: Vec<u64> = line.split_whitespace().filter_map(|w| w.trim_end_matches(',').parse().ok()).collect();
    // the line after "The following is the error trace for the error:"
    let error = (!out.contains("No error found")).then(|| {
        let mut after = out.lines().skip_while(|l| !l.contains("error trace for the error"));
        after.nth(1);
        after.find(|l| !l.trim().is_empty()).unwrap_or("?").trim().to_string()
    });
    let trace = out.lines().filter(|l| l.starts_with("Rule ")).count();
    std::fs::remove_dir_all(&dir).ok();
    Some(Rumur { states: n[0], rules: n[1], error, trace })
}

/// fabricsim's (states, transitions) of the table, deadlock check on.
fn fabricsim(t: &Table, caches: usize) -> (u64, u64) {
    let p = t.protocol(sizes(caches), None, false).unwrap();
    let r = explore(&p, &Options { check_deadlock: true, ..Options::default() }, &mut |_| {});
    assert!(r.violation.is_none() && r.complete, "{}", r.trace_text());
    (r.states, r.transitions)
}

fn model(t: &Table, caches: usize, mutant: Option<&str>) -> String {
    export(t, sizes(caches), mutant, Murphi::default()).unwrap_or_else(|e| panic!("{e}"))
}

/// German's table at 2 and 3 clients: Rumur counts exactly fabricsim's
/// states, and its "rules fired" are fabricsim's transitions.
#[test]
fn german_exported_gives_rumur_fabricsims_counts() {
    let t = table(&german_text());
    for (n, want) in [(2, (3390, 9912)), (3, (58104, 235872))] {
        assert_eq!(fabricsim(&t, n), want);
        let Some(r) = rumur(&model(&t, n, None), &format!("german{n}"), "-O1", &[]) else { return };
        assert_eq!((r.states, r.rules, r.error), (want.0, want.1, None), "{n} clients");
    }
}

/// 1.1 million states, Rumur's count of german.m:
/// `cargo test --release -p fabricsim --test all tables_murphi -- --ignored --nocapture`.
#[test]
#[ignore]
fn german_exported_at_four_clients() {
    let t = table(&german_text());
    let Some(r) = rumur(&model(&t, 4, None), "german4", "-O2", &[]) else { return };
    println!("rumur: {r:?}");
    assert_eq!((r.states, r.rules, r.error), (1105434, 5922288, None));
}

/// Channels of capacity 2: FIFO queues in send order, and unordered
/// multisets (kept sorted, each distinct message deliverable) for the
/// requests and the acknowledgements. (German with every channel
/// unordered breaks: a grant overtakes an invalidation.)
#[test]
fn deeper_and_unordered_channels_count_the_same() {
    let fifo = german_text().replace("fifo capacity 1", "fifo capacity 2");
    let mixed = fifo.replace("vc chan1 fifo", "vc chan1 unordered").replace("vc chan3 fifo", "vc chan3 unordered");
    for (name, text, want) in [("fifo", fifo, (38206, 137128)), ("unordered", mixed, (28344, 108840))] {
        let t = table(&text);
        assert_eq!(fabricsim(&t, 2), want, "{name}");
        let Some(r) = rumur(&model(&t, 2, None), &format!("german-{name}2"), "-O1", &[]) else { return };
        assert_eq!((r.states, r.rules, r.error), (want.0, want.1, None), "{name}");
    }
}

/// The count comparison catches a model whose channels differ: the
/// exported model with a slot more per channel is not German's.
#[test]
fn a_model_with_other_channels_counts_differently() {
    let t = table(&german_text());
    let m = model(&t, 2, None);
    assert!(m.contains("CAP : 1;"));
    let Some(r) = rumur(&m.replace("CAP : 1;", "CAP : 2;"), "german-cap2", "-O1", &[]) else { return };
    assert!(r.error.is_none() && r.states != 3390, "{r:?}");
}

/// Every mutant of german.tables fails in Rumur as in fabricsim: the same
/// invariant (or an undefined value, or fabricsim's deadlock, an invariant
/// of the model that Rumur's own deadlock check cannot see: new requests
/// stay enabled), after as many steps (tests/german.rs's CAUGHT_BY).
#[test]
fn mutants_are_caught_by_rumur_too() {
    let t = table(&german_text());
    for &(mutant, kind, steps) in crate::german::CAUGHT_BY {
        // -O0: tiny models, where compiling is most of the time
        let Some(r) = rumur(&model(&t, 2, Some(mutant)), mutant, "-O0", &[]) else { return };
        let e = r.error.unwrap_or_else(|| panic!("mutant {mutant} not caught by rumur"));
        let says = if kind == "undefined value" { kind.to_string() } else { format!("invariant \"{kind}\" failed") };
        assert!(
            e.contains(&says) && r.trace == steps,
            "mutant {mutant}: {e}, {} steps; expected {says}, {steps}",
            r.trace
        );
    }
}

/// With scalarsets for the clients and the data values, Rumur's
/// exhaustive symmetry reduction counts fabricsim's orbits (tests/tables.rs).
#[test]
fn with_symmetry_rumur_counts_fabricsims_orbits() {
    let t = table(&german_text());
    let m = export(&t, sizes(3), None, Murphi { symmetry: true, deadlock: false }).unwrap_or_else(|e| panic!("{e}"));
    assert!(m.contains("client_id : scalarset(3);") && m.contains("DATA : scalarset(2);"));
    let Some(r) = rumur(&m, "german-sym3", "-O1", &["--symmetry-reduction", "exhaustive"]) else { return };
    assert_eq!((r.states, r.rules, r.error), (5235, 21289, None));
}

/// What the export cannot write is refused naming the file, line and feature.
#[test]
fn unsupported_tables_are_refused_by_name() {
    let text = german_text();
    let e = export(&table(&text.replace(" capacity 1", "")), sizes(2), None, Murphi::default()).unwrap_err();
    assert!(e.to_string().starts_with("german.tables:10:4: ") && e.message.contains("capacity"), "{e}");
    let unordered = text.replacen("vc chan2 fifo", "vc chan2 unordered", 1);
    let e = export(&table(&unordered), sizes(2), None, Murphi { symmetry: true, deadlock: true }).unwrap_err();
    assert!(e.to_string().starts_with("german.tables:11:4: channel chan2") && e.message.contains("FIFO"), "{e}");
    let e = export(&table(&text.replace("mem_data", "then")), sizes(2), None, Murphi::default()).unwrap_err();
    assert!(e.message.contains("\"then\" is a Murphi keyword"), "{e}");
    let e = export(&table(&text.replace("home", "t")), sizes(2), None, Murphi::default()).unwrap_err();
    assert!(e.to_string().starts_with("german.tables:26:1: \"t\" is a name the Murphi export gives"), "{e}");
    let e = export(&table(&text), sizes(2), Some("nope"), Murphi::default()).unwrap_err();
    assert!(e.bad_mutant && e.message.contains("forget-sharer"), "{e}");
    // per-address machines are not written yet: refused, not exported as another protocol
    let msi = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/protocols/msi.tables");
    let e = fabricsim::agents::table::murphi::export_file(&msi, sizes(2), None, Murphi::default()).unwrap_err();
    assert!(e.message.contains("per address"), "{e}");
}
