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
    Sizes { caches, directories: 1, values: 2 }
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
