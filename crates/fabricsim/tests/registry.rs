//! The protocol registry: every family's mutants are accepted by its own
//! checker, a family's key is refused for another family with the name of
//! the one that takes it, and the listing documents every key.

use fabricsim::config::check_file;
use fabricsim::config::Format;
use fabricsim::registry;

/// A check of family `name` with its `[protocol.<name>]` keys `own` and
/// `[check]` keys `lines`.
fn check_of(name: &str, own: &str, lines: &str) -> Result<check_file::CheckResult, String> {
    let text = format!("[protocol]\nname = {name:?}\n[protocol.{name}]\n{own}\n[check]\n{lines}\n");
    check_file::run(&text, "c.toml", Format::Toml, &[]).map_err(|e| e.to_string())
}

/// A check file as it is given.
fn check(text: &str) -> Result<check_file::CheckResult, String> {
    check_file::run(text, "c.toml", Format::Toml, &[]).map_err(|e| e.to_string())
}

#[test]
fn every_listed_mutant_builds_and_runs() {
    for f in registry::FAMILIES.iter().filter(|f| f.checks()) {
        // bi's checker tells its mutant from the machine only when coherent,
        // and bi_runtime's skew-ignored needs clocks that differ
        let own = match f.name() {
            "bi" => "coherent = true\ndomains = 2",
            "bi_runtime" => "skew = 1",
            _ => "",
        };
        for (m, _) in f.mutants() {
            let r = check_of(f.name(), own, &format!("mutant = {m:?}\nmax_states = 50"));
            assert!(r.is_ok(), "{} mutant {m}: {}", f.name(), r.err().unwrap_or_default());
        }
    }
}

#[test]
fn an_unknown_mutant_lists_the_family_s_own() {
    for f in registry::FAMILIES.iter().filter(|f| f.checks()) {
        let e = check_of(f.name(), "", "mutant = \"nope\"\nmax_states = 10").err().unwrap();
        assert!(e.contains("check.mutant") && e.contains(f.mutants()[0].0), "{}: {e}", f.name());
    }
}

#[test]
fn an_old_flat_check_key_names_its_new_place() {
    let e = check("[check]\nprotocol = \"mesi\"\ncaches = 2").err().unwrap();
    assert!(e.contains("c.toml: check.protocol: moved to [protocol]: give it as [protocol] name = \"mesi\""), "{e}");
    let e = check("[check]\nprotocol = \"g.tables\"").err().unwrap();
    assert!(e.contains("check.protocol: moved to [protocol]: give it as [protocol] table = \"g.tables\""), "{e}");
    // the protocol's own keys: to its table (the file's protocol, else the first that takes the key)
    let e = check("[check]\nprotocol = \"gcs\"\nvariant = \"pthread\"").err().unwrap();
    assert!(e.contains("check.protocol: moved"), "the protocol first: {e}");
    let e = check("[protocol]\nname = \"gcs\"\n[check]\nvariant = \"pthread\"").err().unwrap();
    assert!(e.contains("check.variant: moved to [protocol.gcs]: give it as protocol.gcs.variant"), "{e}");
    let e = check("[protocol]\nname = \"dcoh\"\n[check]\nvariant = \"so\"").err().unwrap();
    assert!(e.contains("check.variant: moved to [protocol.cord]: give it as protocol.cord.variant"), "{e}");
    let e = check("[protocol]\nname = \"bi_runtime\"\n[check]\nskew = 1").err().unwrap();
    assert!(e.contains("check.skew: moved to [protocol.bi_runtime]"), "{e}");
    // keys whose unit or place changed say how to give them now
    let e = check("[protocol]\nname = \"dcoh\"\n[check]\nsnoop_filter = 2").err().unwrap();
    assert!(
        e.contains("check.snoop_filter: moved to [protocol.dcoh.snoop_filter] size") && e.contains("\"128B\""),
        "{e}"
    );
    let e = check("[protocol]\nname = \"cord\"\n[check]\ntso = true").err().unwrap();
    assert!(e.contains("check.tso: moved to [protocol]") && e.contains("model = \"tso\""), "{e}");
}

#[test]
fn a_key_of_another_family_s_table_is_refused() {
    let e = check_of("dcoh", "variant = \"so\"", "").err().unwrap();
    assert!(e.contains("c.toml: protocol.dcoh.variant: unknown key"), "{e}");
    let e = check("[protocol]\nname = \"msi\"\n[protocol.dcoh]\ninvblk = 2").err().unwrap();
    assert!(e.contains("protocol.dcoh: a table of protocol \"dcoh\", not of the one checked (\"msi\")"), "{e}");
    let e = check_of("msi", "invblk = 2", "").err().unwrap();
    assert!(e.contains("protocol.msi.invblk: unknown key"), "{e}");
    // [protocol]'s run keys are run's
    let e = check("[protocol]\nname = \"msi\"\ndriver = \"random\"").err().unwrap();
    assert!(e.contains("protocol.driver: applies to fabricsim run, not to a check"), "{e}");
    let e = check("[protocol]\nname = \"msi\"\nmodel = \"tso\"").err().unwrap();
    assert!(e.contains("protocol.model: \"tso\": does not apply to a check of \"msi\"") && e.contains("cord"), "{e}");
}

#[test]
fn a_misspelt_key_gets_a_suggestion_from_the_family_s_keys() {
    let e = check_of("dcoh", "snoop_filtre = 2", "").err().unwrap();
    assert!(e.contains("c.toml: protocol.dcoh.snoop_filtre: unknown key; did you mean `snoop_filter`?"), "{e}");
    let e = check_of("msi", "", "cachs = 2").err().unwrap();
    assert!(e.contains("did you mean `caches`?"), "{e}");
}

#[test]
fn a_size_a_family_does_not_take_is_refused_with_the_sizes_it_takes() {
    let e = check_of("gcs", "", "directories = 2").err().unwrap();
    assert!(
        e.contains("check.directories: does not apply to [protocol] name = \"gcs\"")
            && e.contains("caches (compute blades)"),
        "{e}"
    );
}

#[test]
fn an_unknown_protocol_is_named_with_a_suggestion_from_the_registry() {
    let e = check("[protocol]\nname = \"mesy\"").err().unwrap();
    assert!(e.contains("protocol.name: \"mesy\": no such protocol; did you mean \"mesi\"?"), "{e}");
    let e = check("[check]\ncaches = 2").err().unwrap();
    assert!(e.contains("protocol.name: missing"), "{e}");
}

#[test]
fn the_listing_gives_every_family_its_keys_and_defaults() {
    let d = registry::describe();
    let fams = d.as_array().unwrap();
    assert_eq!(fams.len(), registry::FAMILIES.len());
    let dcoh = fams.iter().find(|f| f["name"] == "dcoh").unwrap();
    let key = |k: &str| dcoh["check"]["params"].as_array().unwrap().iter().find(|p| p["key"] == k).cloned();
    let sf = key("snoop_filter").expect("a check reads [protocol.dcoh] snoop_filter");
    assert_eq!(sf["type"], "table");
    assert!(!sf["doc"].as_str().unwrap().is_empty());
    assert_eq!(key("hdm_h").unwrap()["type"], "string", "bytes, as a run's");
    // a check reads its family's [protocol.<name>] keys, listed from the run table's struct
    for f in fams.iter().filter(|f| !f["run"].is_null()) {
        let run: Vec<&serde_json::Value> = f["run"]["params"].as_array().unwrap().iter().map(|p| &p["key"]).collect();
        for p in f["check"]["params"].as_array().unwrap() {
            assert!(run.contains(&&p["key"]), "{}: check key {} is not a run key", f["name"], p["key"]);
        }
    }
    let cord = fams.iter().find(|f| f["name"] == "cord").unwrap();
    assert_eq!(cord["check"]["model"], true);
}

#[test]
fn an_unknown_litmus_protocol_gets_the_nearest_name_and_every_family() {
    use fabricsim::config::litmus::run_on_protocol;
    let text = "C SB\n{ x = 0; y = 0; }\nP0 (atomic_int* x, atomic_int* y) { atomic_store_explicit(x, 1, memory_order_relaxed); int r0 = atomic_load_explicit(y, memory_order_relaxed); }\nP1 (atomic_int* x, atomic_int* y) { atomic_store_explicit(y, 1, memory_order_relaxed); int r1 = atomic_load_explicit(x, memory_order_relaxed); }\nexists (0:r0 = 0 /\\ 1:r1 = 0)\n";
    let program = std::sync::Arc::new(fabricsim::programs::litmus::parse(text, "SB.litmus").unwrap());
    let e = run_on_protocol(program, fabricsim::programs::Model::Sc, "mesy").err().unwrap();
    assert!(
        e.contains("\"mesy\": no such protocol; did you mean \"mesi\"?") && e.contains("\"cord\" or \"pcie\""),
        "{e}"
    );
}

#[test]
fn a_family_checked_another_way_says_how() {
    let e = check("[protocol]\nname = \"pcie\"").err().unwrap();
    assert!(e.contains("fabricsim litmus FILE --protocol pcie --set variant=VARIANT --set nic=T"), "{e}");
}

/// Where a protocol's name is still matched outside its folder and the
/// registry: (file below `src/`, lines). The list may only shrink: a file
/// with more lines, or one not listed, fails; so does one with fewer (lower
/// its count).
const NAME_MATCHES: &[(&str, usize)] = &[];

/// Lines of `text` (comments and the test module left out) that compare
/// with, match on or list a family's name.
fn name_matches(text: &str, names: &[&str]) -> usize {
    let code = match text.find("#[cfg(test)]\nmod tests") {
        Some(i) => &text[..i],
        None => text,
    };
    code.lines()
        .map(|l| l.split("//").next().unwrap_or(""))
        .filter(|l| {
            names.iter().any(|n| {
                let q = format!("\"{n}\"");
                let before = ["== ", "!= ", "| ", "vec![", "([", "&[", "if ["];
                let after = [" =>", " |"];
                before.iter().any(|b| l.contains(&format!("{b}{q}")))
                    || after.iter().any(|a| l.contains(&format!("{q}{a}")))
            })
        })
        .count()
}

fn sources(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
    for e in std::fs::read_dir(dir).expect("the source folder") {
        let p = e.expect("an entry").path();
        if p.is_dir() {
            sources(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

#[test]
fn protocol_names_are_matched_only_in_their_folders_and_the_registry() {
    let names = registry::names();
    let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    sources(&src, &mut files);
    let mut found = Vec::new();
    for f in files {
        let rel = f.strip_prefix(&src).expect("below src").to_string_lossy().replace('\\', "/");
        if rel.starts_with("agents/") || rel.starts_with("registry/") {
            continue;
        }
        let n = name_matches(&std::fs::read_to_string(&f).expect("readable"), &names);
        if n > 0 {
            found.push((rel, n));
        }
    }
    found.sort();
    let mut known: Vec<(String, usize)> = NAME_MATCHES.iter().map(|(f, n)| (f.to_string(), *n)).collect();
    known.sort();
    assert_eq!(found, known, "protocol names matched outside their folders (file, lines)");
}

#[test]
fn the_name_rule_sees_a_match_and_ignores_a_comment() {
    let names = ["mesi"];
    assert_eq!(name_matches("if p == \"mesi\" {}\n// p == \"mesi\"\n", &names), 1);
    assert_eq!(name_matches("match p { \"mesi\" => 1, _ => 0 }", &names), 1);
    assert_eq!(name_matches("let name = \"mesi\";", &names), 0);
}

#[test]
fn a_run_of_a_checked_only_family_says_so() {
    let text = "name = \"r\"\n[[switch]]\nname = \"sw\"\n[[memory]]\nname = \"m\"\n[[requester]]\nname = \"c\"\n\
                [[link]]\na = \"c\"\nb = \"sw\"\n[[link]]\na = \"sw\"\nb = \"m\"\n[protocol]\nname = \"bi_runtime\"\n";
    let e = fabricsim::config::resolve(text, "r.toml", fabricsim::Format::Toml, &[], None).err().unwrap().to_string();
    assert!(e.contains("protocol.name") && e.contains("checked only"), "{e}");
}

#[test]
fn the_listing_gives_each_timed_family_its_protocol_table_keys() {
    let d = registry::describe();
    let fam = |name: &str| d.as_array().unwrap().iter().find(|f| f["name"] == name).unwrap().clone();
    let key = |f: &serde_json::Value, k: &str| {
        f["run"]["params"].as_array().unwrap().iter().find(|p| p["key"] == k).cloned().unwrap_or_default()
    };
    let gcs = fam("gcs");
    assert_eq!(key(&gcs, "region")["type"], "string", "{gcs}");
    assert!(!key(&gcs, "region")["doc"].as_str().unwrap().is_empty());
    let bi = fam("bi");
    assert_eq!(key(&bi, "bench")["type"], "table", "{bi}");
    assert_eq!(key(&fam("dcoh"), "invblk")["type"], "integer");
    assert_eq!(key(&fam("cord"), "variant")["default"], "\"cord\"");
    // no table: no keys; no timed machine: no run side
    assert!(fam("msi")["run"]["params"].as_array().unwrap().is_empty());
    assert!(fam("bi_runtime")["run"].is_null());
}
