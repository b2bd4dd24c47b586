//! The layers import only downward (docs/architecture.md): engine, fabric,
//! programs, agents, workloads
//! and stats, the specs the engines share (`spec`), then sim and check,
//! then the protocol registry, then config, then the crate's front door. This test reads every module's `crate::` paths and
//! fails on an upward one that is not in [`KNOWN`], the list of those that
//! remain to be moved; an entry that no longer occurs fails too, so the
//! list only shrinks.

use std::collections::BTreeSet;
use std::path::Path;

/// Upward imports still to remove: (module file, layer it reaches).
const KNOWN: &[(&str, &str)] = &[
    // BI's machine runs its applications (the BONSAI tree, U-RCU) itself
    ("agents/bi/tree.rs", "workloads"),
    ("agents/bi/urcu.rs", "workloads"),
    // the CXL.mem requester generates its own workload
    ("agents/cxl/requester.rs", "workloads"),
];

fn layer(module: &str) -> Option<u8> {
    Some(match module {
        "engine" | "error" | "input" => 0,
        "fabric" => 1,
        "programs" => 2,
        "agents" => 3,
        "workloads" | "stats" => 4,
        "spec" => 5,
        "sim" | "check" => 6,
        "registry" => 7,
        "config" => 8,
        "bench" => 9,
        "lib" => 10,
        _ => return None,
    })
}

/// The layer name of a path below `crate::`.
fn module_of(path: &[&str]) -> &'static str {
    const MODULES: [&str; 14] = [
        "engine",
        "error",
        "input",
        "fabric",
        "programs",
        "agents",
        "workloads",
        "stats",
        "spec",
        "sim",
        "check",
        "config",
        "registry",
        "bench",
    ];
    let top = path[0].trim_end_matches(".rs");
    MODULES.into_iter().find(|m| *m == top).unwrap_or(if top == "lib" { "lib" } else { "other" })
}

/// The code of a file without comments and without its `#[cfg(test)]` module.
fn code(text: &str) -> String {
    let text = match text.find("#[cfg(test)]\nmod tests") {
        Some(i) => &text[..i],
        None => text,
    };
    text.lines()
        .map(|l| match l.find("//") {
            Some(i) => &l[..i],
            None => l,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for e in std::fs::read_dir(dir).expect("the source folder") {
        let p = e.expect("an entry").path();
        if p.is_dir() {
            files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// Every (file, layer) pair where a module reaches a layer above its own.
fn upward(src: &Path) -> BTreeSet<(String, String)> {
    let mut all = Vec::new();
    files(src, &mut all);
    let mut found = BTreeSet::new();
    for f in all {
        let rel = f.strip_prefix(src).unwrap().to_string_lossy().replace('\\', "/");
        // unit tests compiled only under cfg(test) may reach anything
        if rel.ends_with("/tests.rs") {
            continue;
        }
        let parts: Vec<&str> = rel.split('/').collect();
        let from = module_of(&parts);
        let Some(from_layer) = layer(from) else { continue };
        let text = code(&std::fs::read_to_string(&f).unwrap());
        for (i, _) in text.match_indices("crate::") {
            let rest = &text[i + "crate::".len()..];
            let path: Vec<&str> = rest
                .split(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':'))
                .next()
                .unwrap_or("")
                .split("::")
                .collect();
            let to = module_of(&path);
            if let Some(to_layer) = layer(to) {
                if to_layer > from_layer {
                    found.insert((rel.clone(), to.to_string()));
                }
            }
        }
    }
    found
}

#[test]
fn no_module_imports_a_layer_above_its_own() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let found = upward(&src);
    let known: BTreeSet<(String, String)> = KNOWN.iter().map(|(f, l)| (f.to_string(), l.to_string())).collect();
    let new: Vec<_> = found.difference(&known).collect();
    assert!(new.is_empty(), "upward imports (file, layer reached): {new:?}");
    let gone: Vec<_> = known.difference(&found).collect();
    assert!(gone.is_empty(), "no longer upward, remove from KNOWN: {gone:?}");
}

#[test]
fn the_rule_sees_an_upward_import() {
    let dir = std::env::temp_dir().join(format!("fabricsim-layers-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("fabric")).unwrap();
    std::fs::write(dir.join("fabric/x.rs"), "use crate::sim::System; // uses\n// crate::config in a comment\n")
        .unwrap();
    let found = upward(&dir);
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(found.into_iter().collect::<Vec<_>>(), vec![("fabric/x.rs".to_string(), "sim".to_string())]);
}
