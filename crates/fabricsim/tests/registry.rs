//! The protocol registry: every family's mutants are accepted by its own
//! checker, a family's key is refused for another family with the name of
//! the one that takes it, and the listing documents every key.

use fabricsim::config::Format;
use fabricsim::registry::{self, check_file};

fn check(lines: &str) -> Result<check_file::CheckResult, String> {
    let text = format!("[check]\n{lines}\n");
    check_file::run(&text, "c.toml", Format::Toml, &[]).map_err(|e| e.to_string())
}

#[test]
fn every_listed_mutant_builds_and_runs() {
    for f in registry::FAMILIES {
        // bi's checker tells its mutant from the machine only when coherent,
        // and bi_runtime's skew-ignored needs clocks that differ
        let extra = match f.name() {
            "bi" => "coherent = true\n",
            "bi_runtime" => "skew = 1\n",
            _ => "",
        };
        for (m, _) in f.mutants() {
            let r = check(&format!("protocol = {:?}\nmutant = {m:?}\nmax_states = 50\n{extra}", f.name()));
            assert!(r.is_ok(), "{} mutant {m}: {}", f.name(), r.err().unwrap_or_default());
        }
    }
}

#[test]
fn an_unknown_mutant_lists_the_family_s_own() {
    for f in registry::FAMILIES {
        let e = check(&format!("protocol = {:?}\nmutant = \"nope\"\nmax_states = 10", f.name())).err().unwrap();
        assert!(e.contains("check.mutant") && e.contains(f.mutants()[0].0), "{}: {e}", f.name());
    }
}

#[test]
fn a_key_of_another_family_names_the_families_that_take_it() {
    let e = check("protocol = \"dcoh\"\nvariant = \"so\"").err().unwrap();
    assert!(e.contains("check.variant: applies to protocol = \"cord\" or \"gcs\" only"), "{e}");
    let e = check("protocol = \"msi\"\nsnoop_filter = 2").err().unwrap();
    assert!(e.contains("check.snoop_filter: applies to protocol = \"dcoh\" only"), "{e}");
}

#[test]
fn a_misspelt_key_gets_a_suggestion_from_the_family_s_keys() {
    let e = check("protocol = \"dcoh\"\nsnoop_filtre = 2").err().unwrap();
    assert!(e.contains("check.snoop_filtre: unknown key; did you mean `snoop_filter`?"), "{e}");
    let e = check("protocol = \"msi\"\ncachs = 2").err().unwrap();
    assert!(e.contains("did you mean `caches`?"), "{e}");
}

#[test]
fn a_size_a_family_does_not_take_is_refused_with_the_sizes_it_takes() {
    let e = check("protocol = \"gcs\"\ndirectories = 2").err().unwrap();
    assert!(
        e.contains("check.directories: does not apply to protocol = \"gcs\"") && e.contains("caches (compute blades)"),
        "{e}"
    );
}

#[test]
fn an_unknown_protocol_is_named_with_a_suggestion_from_the_registry() {
    let e = check("protocol = \"mesy\"").err().unwrap();
    assert!(e.contains("\"mesy\": no such protocol; did you mean \"mesi\"?"), "{e}");
}

#[test]
fn the_listing_gives_every_family_its_keys_and_defaults() {
    let d = registry::describe();
    let fams = d.as_array().unwrap();
    assert_eq!(fams.len(), registry::FAMILIES.len());
    let dcoh = fams.iter().find(|f| f["name"] == "dcoh").unwrap();
    let sf = dcoh["check"]["params"].as_array().unwrap().iter().find(|p| p["key"] == "snoop_filter").unwrap();
    assert_eq!(sf["default"], "1");
    assert_eq!(sf["type"], "integer");
    assert!(!sf["doc"].as_str().unwrap().is_empty());
}

#[test]
fn an_unknown_litmus_protocol_gets_the_nearest_name_and_every_family() {
    use fabricsim::check::litmus_run::run_on_protocol;
    let text = "C SB\n{ x = 0; y = 0; }\nP0 (atomic_int* x, atomic_int* y) { atomic_store_explicit(x, 1, memory_order_relaxed); int r0 = atomic_load_explicit(y, memory_order_relaxed); }\nP1 (atomic_int* x, atomic_int* y) { atomic_store_explicit(y, 1, memory_order_relaxed); int r1 = atomic_load_explicit(x, memory_order_relaxed); }\nexists (0:r0 = 0 /\\ 1:r1 = 0)\n";
    let program = std::sync::Arc::new(fabricsim::programs::litmus::parse(text, "SB.litmus").unwrap());
    let e = run_on_protocol(program, fabricsim::programs::Model::Sc, "mesy").err().unwrap();
    assert!(
        e.contains("\"mesy\"; did you mean \"mesi\"?") && e.contains("cord") && e.contains("pcie-mmio-MODE"),
        "{e}"
    );
}
