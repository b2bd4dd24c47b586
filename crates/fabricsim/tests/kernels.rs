//! The seeds' kernels are plug-ins: the engine and the configuration reach
//! them only through `workloads::kernels::KERNELS` and the source traits.

use fabricsim::workloads::kernels::{self, KERNELS};
use fabricsim::workloads::kinds::Pattern;
use fabricsim::workloads::source::{KernelMachine, Seat};

#[test]
fn every_kernel_key_is_documented_and_names_are_unique_and_not_generic() {
    let mut names: Vec<&str> = KERNELS.iter().map(|k| k.name()).collect();
    for k in KERNELS {
        assert!(Pattern::parse(k.name()).is_none(), "{} is also a generic pattern", k.name());
        assert!(!k.about().is_empty(), "{}", k.name());
        let params = k.params();
        assert!(!params.is_empty(), "{} has no keys", k.name());
        for p in &params {
            assert!(!p.doc.is_empty(), "[workload.{}] {} has no doc comment", k.name(), p.key);
            assert!(kernels::owners(&p.key).any(|o| o == k.name()), "{} owns {}", k.name(), p.key);
        }
    }
    names.sort();
    names.dedup();
    assert_eq!(names.len(), KERNELS.len(), "two kernels share a name");
}

fn names_a_kernel(line: &str) -> bool {
    KERNELS.iter().any(|k| line.contains(&format!("kernels::{}", k.name())))
}

/// Lines of `src/<dir>` that name a kernel's module (`kernels::<name>`).
fn kernel_mentions(dir: &str) -> Vec<String> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src").join(dir);
    let mut out = Vec::new();
    let mut stack = vec![root];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).expect("a source folder") {
            let p = e.expect("an entry").path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "rs") {
                let text = std::fs::read_to_string(&p).expect("readable");
                for (i, l) in text.lines().enumerate().filter(|(_, l)| names_a_kernel(l)) {
                    out.push(format!("{}:{}: {l}", p.display(), i + 1));
                }
            }
        }
    }
    out
}

#[test]
fn the_engine_and_the_configuration_name_no_kernel() {
    for dir in ["sim", "config", "spec"] {
        let found = kernel_mentions(dir);
        assert!(found.is_empty(), "kernels named outside workloads/kernels:\n{}", found.join("\n"));
    }
    // the rule sees a mention
    assert!(names_a_kernel("use crate::workloads::kernels::dma_reads::Shape;"));
    assert!(!names_a_kernel("let k = kernels::find(name);"));
}

#[test]
fn a_kernel_resolves_its_keys_and_builds_a_source_per_core_through_the_registry() {
    let w = kernels::Workload { line: 64, footprint: 1 << 20 };
    let table: toml::Table = toml::from_str("hosts = 2\nsenders = \"one\"").unwrap();
    let (k, resolved) =
        kernels::find("remote_stores").unwrap().build(Some(table), "t.toml", "workload", &[], &w).unwrap();
    assert_eq!(resolved["hosts"], 2);
    assert_eq!(k.largest_store(), Some((64, "store_size")));
    let m = KernelMachine { cores: 4, homes: 2, lines: (1 << 20) / 64, line: 64 };
    k.check(&m).unwrap();
    // senders = "one": only core 0 issues
    let seat = |core| Seat { core, cores: 4, homes: 2, lines: (1 << 20) / 64, line: 64 };
    assert!(k.source(&seat(0)).is_some());
    assert!(k.source(&seat(1)).is_none());
    // a bad key names its whole path
    let bad: toml::Table = toml::from_str("hosts = 2\nsenders = \"two\"").unwrap();
    let e = kernels::find("remote_stores").unwrap().build(Some(bad), "t.toml", "workload", &[], &w).err().unwrap();
    assert_eq!(e.to_string(), "t.toml: workload.remote_stores.senders: \"two\": expected \"all\" or \"one\"");
    let unknown: toml::Table = toml::from_str("hosts = 2\nfanot = 1").unwrap();
    let e = kernels::find("remote_stores").unwrap().build(Some(unknown), "t.toml", "workload", &[], &w).err().unwrap();
    assert!(e.to_string().contains("workload.remote_stores.fanot: unknown key; did you mean `fanout`?"), "{e}");
}
