//! Protocols from tables (issue 36): the table language's checks, and
//! German's protocol as a table reaching exactly the Rust port's states.

use std::path::PathBuf;

use fabricsim::agents::table::{Sizes, Table, TableProtocol};
use fabricsim::check::{explore, Options, Report};

fn german_file() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../examples/protocols/german.tables")
}

fn german() -> Table {
    Table::load(&german_file()).unwrap_or_else(|e| panic!("{e}"))
}

fn sizes(caches: usize) -> Sizes {
    Sizes::new(caches, 1, 2)
}

fn run(p: &TableProtocol, deadlock: bool) -> Report {
    explore(p, &Options { check_deadlock: deadlock, ..Options::default() }, &mut |_| {})
}

/// The Rust port's (and Rumur's) counts: tests/german.rs.
#[test]
fn german_table_matches_the_rust_port() {
    let t = german();
    for (n, states, transitions) in [(2, 3390, 9912), (3, 58104, 235872)] {
        let r = run(&t.protocol(sizes(n), None, false).unwrap(), true);
        assert!(r.violation.is_none() && r.complete, "{}", r.trace_text());
        assert_eq!((r.states, r.transitions), (states, transitions), "{n} clients");
    }
}

/// 1.1 million states, as Rumur counts them (tests/german.rs), and the
/// depth: `cargo test --release -p fabricsim --test all tables:: -- --ignored`.
#[test]
#[ignore]
fn german_table_matches_rumur_at_four_clients() {
    let r = run(&german().protocol(sizes(4), None, false).unwrap(), true);
    assert!(r.violation.is_none() && r.complete, "{}", r.trace_text());
    assert_eq!((r.states, r.transitions, r.depth), (1105434, 5922288, 35));
}

/// Rumur's orbits with symmetry over NODE and DATA (tests/german.rs).
#[test]
fn german_table_counts_rumurs_orbits() {
    let t = german();
    for (n, states, rules) in [(2, 852, 2491), (3, 5235, 21289)] {
        let r = run(&t.protocol(sizes(n), None, true).unwrap(), false);
        assert!(r.violation.is_none() && r.complete && r.symmetry, "{}", r.trace_text());
        assert_eq!((r.states, r.transitions), (states, rules), "{n} clients");
    }
}

/// Each `mutant` row of german.tables is one of German's mutants
/// (german.rs's MUTANTS), caught by the same check with a counterexample
/// of the same length as the Rust port's (tests/german.rs's CAUGHT_BY).
#[test]
fn german_table_mutants_are_caught_as_in_the_rust_port() {
    use crate::german::CAUGHT_BY;
    let t = german();
    let mut names = t.mutants();
    names.sort();
    let mut want: Vec<&str> = CAUGHT_BY.iter().map(|c| c.0).collect();
    want.sort();
    assert_eq!(names, want);
    for &(name, kind, len) in CAUGHT_BY {
        let r = run(&t.protocol(sizes(2), Some(name), false).unwrap(), true);
        let v = r.violation.as_ref().unwrap_or_else(|| panic!("mutant {name} was not caught"));
        assert_eq!((v.kind.as_str(), v.steps.len()), (kind, len), "mutant {name}: {}", r.trace_text());
    }
    let e = t.protocol(sizes(2), Some("no-such-bug"), false).err().expect("refused");
    assert!(e.bad_mutant && e.message.contains("grant-before-acks"), "{e}");
    // ack-keeps-copy replaces two rows and is listed once
    assert_eq!(e.message.matches("ack-keeps-copy").count(), 1, "{e}");
}

/// The german table with `from` replaced by `to` (which must occur).
fn edited(from: &str, to: &str) -> Result<Table, String> {
    let text = std::fs::read_to_string(german_file()).unwrap();
    assert!(text.contains(from), "{from:?} is not in german.tables");
    let t = Table::parse(&text.replacen(from, to, 1), "german.tables").map_err(|e| e.to_string())?;
    t.protocol(sizes(2), None, false).map(|_| t).map_err(|e| e.to_string())
}

#[test]
fn a_missing_state_event_pair_is_refused_by_name() {
    let e = edited("  *     GntE : data := msg.data -> E\n", "").expect_err("refused");
    assert!(e.starts_with("german.tables:"), "{e}");
    assert!(
        e.contains("machine client: 3 (state, event) pairs") && e.contains("(I, GntE), (S, GntE), (E, GntE)"),
        "{e}"
    );
    // declared impossible instead: accepted
    edited("  *     GntE : data := msg.data -> E\n", "  impossible * GntE\n").unwrap();
    let e = edited("  impossible E SendReqE\n", "").expect_err("refused");
    assert!(e.contains("1 (state, event) pairs") && e.contains("(E, SendReqE)"), "{e}");
}

#[test]
fn parse_errors_name_line_column_token_and_what_was_expected() {
    let cases: &[(&str, &str, &str)] = &[
        ("message ReqS on chan1\n", "message ReqS chan1\n", "german.tables:14:14: \"chan1\": expected `on`"),
        (
            "  Empty       ReqS : cur_ptr",
            "  Empty       ReqS cur_ptr",
            "german.tables:39:20: \"cur_ptr\": expected `:`",
        ),
        ("vc chan3 fifo capacity 1", "vc chan3 fifo capacity x", "german.tables:12:24: \"x\": expected a capacity"),
        ("  var ex_gntd: bool ", "  var ex_gntd bool ", "german.tables:31:15: \"bool\": expected `:`"),
        ("ghost aux: data = d", "ghost aux: data = d $", "german.tables:23:21: `$`: not a character"),
    ];
    for (from, to, want) in cases {
        let e = edited(from, to).err().unwrap_or_else(|| panic!("{to:?} accepted"));
        assert!(e.starts_with(want), "{to:?}: {e}");
    }
}

#[test]
fn unknown_names_are_refused_with_a_suggestion() {
    let cases: &[(&str, &str, &str)] = &[
        ("inv_set := shr_set -> ReqS", "inv_set := shr_set -> Emty", "no such state of home; did you mean \"Empty\"?"),
        ("mem_data := msg.data", "mem_data := msg.dat", "no such field of InvAck; did you mean \"data\"?"),
        (
            "send GntS(data: mem_data)",
            "send GntS(data: mem_dat)",
            "no such variable or value; did you mean \"mem_data\"?",
        ),
        ("E     Inv : send InvAck", "E     Inv : send InvAk", "no such message; did you mean \"InvAck\"?"),
        ("var cur_ptr: client?", "var cur_ptr: clients?", "no such type; did you mean \"client\"?"),
    ];
    for (from, to, want) in cases {
        let e = edited(from, to).err().unwrap_or_else(|| panic!("{to:?} accepted"));
        assert!(e.contains(want) && e.starts_with("german.tables:"), "{to:?}: {e}");
    }
}

/// After a search, the rows that never fired and the states never reached.
#[test]
fn unfired_transitions_and_unreached_states_are_reported() {
    let t = german();
    let p = t.protocol(sizes(2), None, false).unwrap();
    assert!(run(&p, true).violation.is_none());
    // german.m's RecvInvAck waits while the home is idle, but no ack ever
    // reaches an idle home: the one row of German that never fires
    let idle_ack = |c: &fabricsim::agents::table::Coverage| {
        c.unfired.iter().any(|(_, row)| row.starts_with("Empty       InvAck : stall"))
    };
    let c = p.coverage(&t.lines);
    assert!(c.unfired.len() == 1 && idle_ack(&c) && c.unreached.is_empty(), "{}", c.text());
    // a dead row: the home never sends an invalidation for a ReqS
    let dead = "  ReqS  SendInv(i) [ex_gntd & i in inv_set]";
    let t = edited(dead, "  ReqS  SendInv(i) [false & ex_gntd & i in inv_set]").unwrap();
    let p = t.protocol(sizes(2), None, false).unwrap();
    run(&p, false);
    let c = p.coverage(&t.lines);
    assert_eq!(c.unfired.len(), 2, "{}", c.text());
    assert!(c.unfired.iter().any(|(_, row)| row.starts_with("ReqS  SendInv(i) [false")), "{}", c.text());
    assert!(c.text().contains("2 transitions never fired:\n  line "), "{}", c.text());
}

/// `fabricsim check` on a configuration naming the table file.
#[test]
fn check_configuration_takes_a_table_file() {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../examples/check/german_tables.toml");
    let text = std::fs::read_to_string(&path).unwrap();
    let src = path.display().to_string();
    let fmt = fabricsim::config::Format::Toml;
    let r = fabricsim::config::check_file::run(&text, &src, fmt, &["check.caches=2".into()]).unwrap();
    assert_eq!((r.report.states, r.report.transitions), (3390, 9912));
    let j = r.to_json();
    assert_eq!(j["coverage"]["unfired"][0]["row"], "Empty       InvAck : stall", "{j}");
    assert_eq!(j["coverage"]["unreached"].as_array().map(|a| a.len()), Some(0), "{j}");
    // a mutant by name, with its trace in the table's names
    let r = fabricsim::config::check_file::run(
        &text,
        &src,
        fmt,
        &["check.caches=2".into(), "check.mutant=\"forget-sharer\"".into()],
    )
    .unwrap();
    let t = r.report.trace_text();
    assert!(t.starts_with("CntrlProp") && t.contains("GntS(data: ") && t.contains("Empty { inv_set: "), "{t}");
    let e = fabricsim::config::check_file::run(&text, &src, fmt, &["check.mutant=\"nope\"".into()]).err().unwrap();
    assert!(e.to_string().contains("check.mutant") && e.to_string().contains("forget-sharer"), "{e}");
    let e = fabricsim::config::check_file::run(&text, &src, fmt, &["check.addresses=2".into()]).err().unwrap();
    assert!(e.to_string().contains("check.addresses"), "{e}");
}

/// Interpreted against hand-written: German's protocol, 4 clients, 2
/// values, deadlock check on, one thread, the two run alternately, best
/// of 3 each (docs/performance.md):
/// `cargo test --release -p fabricsim --test all tables::speed -- --ignored --nocapture`.
#[test]
#[ignore]
fn speed() {
    use fabricsim::agents::coherence::german::German;
    let t = german();
    let table = t.protocol(sizes(4), None, false).unwrap();
    let rust = German::new(4, 2);
    let opts = Options { check_deadlock: true, threads: 1, ..Options::default() };
    let mut best = [f64::INFINITY; 2];
    let mut states = [0; 2];
    for _ in 0..3 {
        let r = explore(&rust, &opts, &mut |_| {});
        (states[0], best[0]) = (r.states, best[0].min(r.seconds));
        let r = explore(&table, &opts, &mut |_| {});
        (states[1], best[1]) = (r.states, best[1].min(r.seconds));
    }
    assert_eq!(states[0], states[1]);
    let rate = |i: usize| states[i] as f64 / best[i];
    println!(
        "german 4 clients, 2 values, 1 thread: rust {} states in {:.3} s = {:.0} states/s; \
         table {:.3} s = {:.0} states/s ({:.2} of rust)",
        states[0],
        best[0],
        rate(0),
        best[1],
        rate(1),
        rate(1) / rate(0)
    );
}

/// A machine's word packs as one varint (the checker's frontier), and back.
#[test]
fn agents_and_messages_pack_and_unpack() {
    use fabricsim::agents::table::model::{Agent, Msg};
    use fabricsim::engine::pack::Pack;
    for w in [0u128, 1, 127, 128, u64::MAX as u128, 1 << 64, u128::MAX] {
        let mut b = Vec::new();
        Agent(w).pack(&mut b);
        Agent(7).pack(&mut b);
        let mut s = &b[..];
        assert_eq!((Agent::unpack(&mut s), Agent::unpack(&mut s)), (Agent(w), Agent(7)));
        assert!(s.is_empty());
    }
    let m = Msg { kind: 200, f: [0, 255, 17], addr: 3 };
    let mut b = Vec::new();
    m.pack(&mut b);
    assert_eq!(Msg::unpack(&mut &b[..]), m);
}

/// MSI or MESI as a table (examples/protocols/NAME.tables).
fn directory_table(name: &str) -> Table {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(format!("../../examples/protocols/{name}.tables"));
    Table::load(&path).unwrap_or_else(|e| panic!("{e}"))
}

/// (caches, addresses, values)
type DirSize = (usize, usize, usize);

fn dir_sizes((caches, addresses, values): DirSize) -> Sizes {
    Sizes { addresses, ..Sizes::new(caches, 1, values) }
}

/// The Rust MSI or MESI (agents/coherence/directory.rs), searched beside the table.
fn rust_directory(
    variant: Variant,
    (caches, addresses, values): DirSize,
    symmetry: bool,
    mutant: Option<&str>,
) -> Report {
    let p = Directory::free(variant, caches, 1, addresses, values)
        .with_symmetry(symmetry)
        .with_mutant(mutant.map(|m| mutant_by_name(m).expect("a directory mutant")));
    run_directory(&p)
}

fn run_directory(p: &Directory) -> Report {
    explore(p, &Options { check_deadlock: true, ..Options::default() }, &mut |_| {})
}

/// The table reaches exactly the Rust protocol's states, transitions and
/// depth, and with symmetry (caches, values, addresses) its orbits.
fn table_matches_rust(name: &str, variant: Variant, sizes: &[DirSize]) {
    let t = directory_table(name);
    for &size in sizes {
        for symmetry in [false, true] {
            let r = run(&t.protocol(dir_sizes(size), None, symmetry).unwrap(), true);
            assert!(r.violation.is_none() && r.complete, "{name} {size:?}: {}", r.trace_text());
            let w = rust_directory(variant, size, symmetry, None);
            assert!(w.violation.is_none() && w.complete);
            eprintln!(
                "{name} {size:?} symmetry {symmetry}: {} states, {} transitions, depth {}; table {:.2} s, rust {:.2} s",
                r.states, r.transitions, r.depth, r.seconds, w.seconds
            );
            assert_eq!((r.states, r.transitions, r.depth), (w.states, w.transitions, w.depth), "{name} {size:?}");
        }
    }
}

use fabricsim::agents::coherence::directory::{mutant_by_name, Directory, Variant, MUTANTS as DIRECTORY_MUTANTS};

#[test]
fn msi_table_matches_the_rust_msi() {
    table_matches_rust("msi", Variant::Msi, &[(2, 1, 2), (2, 2, 1), (3, 1, 2)]);
}

#[test]
fn mesi_table_matches_the_rust_mesi() {
    table_matches_rust("mesi", Variant::Mesi, &[(2, 1, 2), (2, 2, 1), (3, 1, 2)]);
    // examples/check/mesi.toml's count
    let r = run(&directory_table("mesi").protocol(dir_sizes((3, 1, 2)), None, false).unwrap(), true);
    assert_eq!(r.states, 131_330);
}

/// Two addresses with two values, and three caches on two addresses:
/// `cargo test --release -p fabricsim --test all tables:: -- --ignored --nocapture`.
#[test]
#[ignore]
fn msi_and_mesi_tables_match_at_two_addresses_and_two_values() {
    table_matches_rust("msi", Variant::Msi, &[(2, 2, 2)]);
    table_matches_rust("mesi", Variant::Mesi, &[(2, 2, 2)]);
}

/// tests/coherence.rs's largest check: 3 caches, 2 addresses, 2 values,
/// with symmetry, about 13 million orbits each (minutes):
/// `cargo test --release -p fabricsim --test all tables::msi_and_mesi_tables_match_the_13 -- --ignored --nocapture`.
#[test]
#[ignore]
fn msi_and_mesi_tables_match_the_13_million_orbits_of_3_caches_2_addresses_2_values() {
    for (name, states, transitions) in [("msi", 13_014_844, 54_641_632), ("mesi", 12_739_492, 54_135_624)] {
        let r = run(&directory_table(name).protocol(dir_sizes((3, 2, 2)), None, true).unwrap(), true);
        assert!(r.violation.is_none() && r.complete, "{name}: {}", r.trace_text());
        eprintln!("{name}: {} orbits, {} transitions, depth {}, {:.0} s", r.states, r.transitions, r.depth, r.seconds);
        assert_eq!((r.states, r.transitions), (states, transitions), "{name}");
    }
}

/// Each `mutant` row set of msi.tables and mesi.tables is one of
/// directory.rs's MUTANTS, caught by the same check with a counterexample
/// as long as the Rust protocol's (2 caches, 1 address, 2 values, as
/// tests/coherence.rs). `reorder-release` is a mutant of the RC front end
/// of program cores, which tables do not have yet.
#[test]
fn msi_and_mesi_table_mutants_are_caught_as_in_the_rust_protocol() {
    for (name, variant) in [("msi", Variant::Msi), ("mesi", Variant::Mesi)] {
        let t = directory_table(name);
        let mut names = t.mutants();
        names.sort();
        let mut want: Vec<&str> = DIRECTORY_MUTANTS.iter().map(|m| m.0).filter(|m| *m != "reorder-release").collect();
        want.sort();
        assert_eq!(names, want, "{name}");
        for m in want {
            let w = rust_directory(variant, (2, 1, 2), false, Some(m));
            let w = w.violation.as_ref().unwrap_or_else(|| panic!("rust {name} {m} was not caught"));
            let r = run(&t.protocol(dir_sizes((2, 1, 2)), Some(m), false).unwrap(), true);
            let v = r.violation.as_ref().unwrap_or_else(|| panic!("{name} table mutant {m} was not caught"));
            eprintln!("{name} {m}: {} after {} steps", v.kind, v.steps.len());
            assert!(["single-writer-multiple-readers", "data-value invariant", "deadlock"].contains(&w.kind.as_str()));
            assert_eq!(
                (v.kind.as_str(), v.steps.len()),
                (w.kind.as_str(), w.steps.len()),
                "{name} {m}: {}",
                r.trace_text()
            );
        }
    }
}

/// A per-address machine's lines must fit its 128-bit word; a table
/// without one takes one address.
#[test]
fn sizes_that_do_not_fit_are_refused_naming_the_size_and_the_limit() {
    let msi = directory_table("msi");
    msi.protocol(dir_sizes((2, 9, 2)), None, false).unwrap();
    let e = msi.protocol(dir_sizes((2, 10, 2)), None, false).err().expect("refused").to_string();
    assert!(e.contains("machine cache: 10 addresses of 14 bits") && e.contains("so at most 9 addresses"), "{e}");
    let e = german().protocol(Sizes { addresses: 2, ..sizes(2) }, None, false).err().expect("refused").to_string();
    assert!(e.contains("2 addresses, but no machine is `per address`"), "{e}");
}

/// `fabricsim check` on examples/check/msi_tables.toml and mesi_tables.toml.
#[test]
fn check_configurations_take_the_msi_and_mesi_tables() {
    for (file, states) in [("msi_tables.toml", 146_090), ("mesi_tables.toml", 131_330)] {
        let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../examples/check").join(file);
        let text = std::fs::read_to_string(&path).unwrap();
        let src = path.display().to_string();
        let r = fabricsim::config::check_file::run(&text, &src, fabricsim::config::Format::Toml, &[]).unwrap();
        assert!(r.report.violation.is_none(), "{file}: {}", r.report.trace_text());
        assert_eq!(r.report.states, states, "{file}");
        // a per-address row is compiled once per line but reported once:
        // directory.rs's defensive branches, which only mutants reach
        let c = r.coverage.expect("a complete search");
        assert_eq!(c.unfired.len(), 5, "{file}: {}", c.text());
        assert!(c.unfired.iter().any(|(_, row)| row.starts_with("B  Unblock : -> I")), "{}", c.text());
        assert!(c.unreached.is_empty(), "{}", c.text());
    }
    // `[check] addresses` reaches a table's per-address machines (2 caches x 2 addresses x 1 value)
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../examples/check/msi_tables.toml");
    let text = std::fs::read_to_string(&path).unwrap();
    let sets: Vec<String> = ["check.caches=2", "check.addresses=2", "check.values=1"].map(String::from).to_vec();
    let src = path.display().to_string();
    let r = fabricsim::config::check_file::run(&text, &src, fabricsim::config::Format::Toml, &sets).unwrap();
    assert_eq!(r.report.states, 26_448);
    // a size the table's machines cannot hold is the size key's error
    let sets: Vec<String> = ["check.caches=2", "check.addresses=10"].map(String::from).to_vec();
    let e = fabricsim::config::check_file::run(&text, &src, fabricsim::config::Format::Toml, &sets).err().unwrap();
    assert!(e.to_string().contains("check.addresses") && e.to_string().contains("at most 9 addresses"), "{e}");
}

/// msi.tables with `from` replaced by `to` (which must occur), compiled at 2 caches, 2 addresses.
fn edited_msi(from: &str, to: &str) -> Result<(), String> {
    let text =
        std::fs::read_to_string(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../examples/protocols/msi.tables"))
            .unwrap();
    assert!(text.contains(from), "{from:?} is not in msi.tables");
    let t = Table::parse(&text.replacen(from, to, 1), "msi.tables").map_err(|e| e.to_string())?;
    t.protocol(dir_sizes((2, 2, 1)), None, false).map(|_| ()).map_err(|e| e.to_string())
}

#[test]
fn per_address_mistakes_are_refused_saying_what_was_expected() {
    let cases: &[(&str, &str, &str)] = &[
        ("machine dir per address", "machine dir per adress", "\"adress\": expected `address`"),
        ("cache[i].data[a] = last[a]", "cache[i].data = last[a]", "cache.data is per address: expected data[a]"),
        ("cache[i].data[a] = last[a]", "cache[i].data[a] = last", "ghost last is per address: expected last[a]"),
        ("cache[i].data[a] = last[a]", "cache[i].data[i] = last[a]", "an address: expected a bound variable"),
    ];
    for (from, to, want) in cases {
        let e = edited_msi(from, to).err().unwrap_or_else(|| panic!("{to:?} accepted"));
        assert!(e.contains(want) && e.starts_with("msi.tables:"), "{to:?}: {e}");
    }
    edited_msi("cache[i].data[a] = last[a]", "cache[i].data[a] = last[a]").unwrap();
}
