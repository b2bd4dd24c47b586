//! Each kind of configuration error gets a message naming the file, the
//! key, the bad value and what was expected.

use crate::common;
use common::error;

const OK: &str = r#"
[[requester]]
name = "r"
[[switch]]
name = "s"
[[memory]]
name = "m"
[[link]]
a = "r"
b = "s"
[[link]]
a = "s"
b = "m"
"#;

#[test]
fn the_base_configuration_is_valid() {
    fabricsim::config::resolve(OK, "ok.toml", fabricsim::Format::Toml, &[], None).unwrap();
}

#[test]
fn unknown_key() {
    let e = error(&format!("{OK}\n[workload]\nwindoww = 3\n"), &[]);
    assert!(e.starts_with("bad.toml: workload.windoww: unknown key"), "{e}");
    assert!(e.contains("expected one of"), "{e}");
    let e = error(OK, &["workload.patern=stream"]);
    assert!(e.starts_with("--set workload.patern=stream: workload.patern: unknown key"), "{e}");
}

#[test]
fn an_unknown_key_near_a_known_one_gets_a_suggestion() {
    let e = error(&format!("{OK}\n[workload]\nwindoww = 3\n"), &[]);
    assert!(e.contains("unknown key; did you mean `window`?"), "{e}");
    let e = error(OK, &["workload.patern=stream"]);
    assert!(e.contains("did you mean `pattern`?"), "{e}");
    // nothing close: no suggestion, the list only
    let e = error(&format!("{OK}\n[workload]\nzzzzzzzz = 3\n"), &[]);
    assert!(e.contains("unknown key, expected one of") && !e.contains("did you mean"), "{e}");
}

#[test]
fn type_errors_are_in_plain_words() {
    let e = error(&format!("{OK}\n[workload]\nwindow = \"64\"\n"), &[]);
    assert!(e.ends_with("workload.window: expected an integer from 0 to 2^32-1, got the string \"64\""), "{e}");
    let e = error(&format!("{OK}\n[workload]\nwindow = 1.5\n"), &[]);
    assert!(e.ends_with("expected an integer from 0 to 2^32-1, got the number 1.5"), "{e}");
    let e = error(&format!("{OK}\n[workload]\nwindow = -3\n"), &[]);
    assert!(e.ends_with("the integer -3: expected an integer from 0 to 2^32-1"), "{e}");
    assert!(!e.contains("u32"), "{e}");
}

#[test]
fn wrong_unit() {
    let e = error(&format!("{OK}\n[defaults.link]\nlatency = \"3 parsecs\"\n"), &[]);
    assert!(e.starts_with("bad.toml: defaults.link.latency:"), "{e}");
    assert!(e.contains("\"3 parsecs\"") && e.contains("unknown unit"), "{e}");
    let e = error(&format!("{OK}\n[defaults.link]\nlatency = 150\n"), &[]);
    assert!(e.contains("missing unit") && e.contains("150ns"), "{e}");
}

#[test]
fn bad_topology_reference() {
    let e = error(&OK.replace("b = \"m\"", "b = \"m9\""), &[]);
    assert!(e.starts_with("bad.toml: link[1].b: \"m9\": no component has this name"), "{e}");
    assert!(e.contains("expected one of"), "{e}");
}

#[test]
fn negative_bandwidth() {
    let e = error(&format!("{OK}\n[defaults.link]\nbandwidth = \"-3GB/s\"\n"), &[]);
    assert!(e.starts_with("bad.toml: defaults.link.bandwidth:"), "{e}");
    assert!(e.contains("-3GB/s") && e.contains("negative") && e.contains("expected"), "{e}");
}

#[test]
fn disconnected_graph() {
    let e = error(
        &format!("{OK}\n[[switch]]\nname = \"s2\"\n[[memory]]\nname = \"m2\"\n[[link]]\na = \"s2\"\nb = \"m2\"\n"),
        &[],
    );
    assert!(e.contains("disconnected graph") && e.contains("cannot reach memory \"m2\""), "{e}");
    let e = error(&format!("{OK}\n[[memory]]\nname = \"lonely\"\n"), &[]);
    assert!(e.contains("\"lonely\" is not connected"), "{e}");
}

#[test]
fn other_errors_name_their_key() {
    let e = error(&format!("{OK}\n[workload]\nread_fraction = 1.5\n"), &[]);
    assert!(e.starts_with("bad.toml: workload.read_fraction: 1.5: expected a fraction"), "{e}");
    let e = error(&format!("{OK}\n[workload]\ninjection = \"open\"\n"), &[]);
    assert!(e.contains("workload.interval") && e.contains("open-loop"), "{e}");
    let e = error(&format!("{OK}\n[topology]\nkind = \"mesh\"\nrows = 2\n"), &[]);
    assert!(e.starts_with("bad.toml: topology.cols: missing"), "{e}");
    let e = error("x = [", &[]);
    assert!(e.starts_with("bad.toml:1:") && e.contains("TOML syntax error"), "{e}");
    let e = error(OK, &["link[7].a=x"]);
    assert!(e.contains("out of range"), "{e}");
    let e = error(&format!("{OK}\n[workload]\ntargets = [\"r\"]\n"), &[]);
    assert!(e.contains("workload.targets") && e.contains("\"r\" is not a memory"), "{e}");
}

#[test]
fn a_mistyped_protocol_name_gets_a_suggestion() {
    let e = error(&format!("{OK}[protocol]\nname = \"mesl\"\n"), &[]);
    assert!(e.contains("protocol.name") && e.contains("did you mean \"mesi\"?"), "{e}");
    let e = error(&format!("{OK}[protocol]\nname = \"zzz\"\n"), &[]);
    assert!(e.contains("no such protocol;") && !e.contains("did you mean"), "{e}");
    let check = |name: &str| {
        let text = format!("[protocol]\nname = \"{name}\"\n");
        match fabricsim::config::check_file::run(&text, "c.toml", fabricsim::config::Format::Toml, &[]) {
            Ok(_) => panic!("{name} accepted"),
            Err(e) => e.to_string(),
        }
    };
    let e = check("germen");
    assert!(e.contains("did you mean \"german\"?"), "{e}");
    let e = check("bi_runtim");
    assert!(e.contains("did you mean \"bi_runtime\"?"), "{e}");
}
