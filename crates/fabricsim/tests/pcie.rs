//! PCIe read ordering (seed 003): the RLSQ variants checked small from
//! the same agents the figures time.

use std::sync::Arc;

use fabricsim::check::litmus_run::run_on_protocol;
use fabricsim::check::oracle::Model;
use fabricsim::workloads::program::Program;

fn litmus(name: &str) -> Arc<Program> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../python/fabricsim/litmus");
    Arc::new(fabricsim::workloads::litmus::parse_file(&dir.join(format!("{name}.litmus"))).unwrap())
}

/// MP over DMA: the host writes data then (release) the flag; the NIC reads the flag with acquire,
/// then the data. Forbidden: the new flag with the old data.
#[test]
fn mp_over_dma_is_ordered_by_the_nic_the_rlsq_and_its_speculation_and_broken_unordered() {
    let mp = litmus("MP+rel+acq");
    let run = |v: &str| run_on_protocol(mp.clone(), Model::Rc, &format!("pcie-{v}@nic=1")).unwrap();
    for v in ["nic", "rc", "rc-opt"] {
        let r = run(v);
        assert!(r.ok(), "{v}: {:?}\n{}", r.forbidden_observed(), r.report.trace_text());
    }
    // today's PCIe: the host serves the data read before the flag read
    // (a hit overtaking a miss); and each broken root complex is caught
    for v in ["unordered", "rc+acquire-no-block", "rc-opt+no-squash"] {
        let r = run(v);
        assert!(r.report.complete && r.report.violation.is_none(), "{v}");
        assert_eq!(r.forbidden_observed().len(), 1, "{v} must show the stale data under the new flag");
    }
}

#[test]
fn bad_pcie_litmus_names_and_programs_are_named() {
    let mp = litmus("MP+rel+acq");
    for (name, want) in [
        ("pcie-rc", "name the NIC's threads"),
        ("pcie-rc@nic=5", "expected a thread 0 to 1"),
        ("pcie-fast@nic=1", "unknown pcie variant \"fast\""),
        ("pcie-rc+nope@nic=1", "unknown mutant \"nope\""),
        // the NIC thread cannot store: P0 of MP stores
        ("pcie-rc@nic=0", "a NIC thread only loads"),
    ] {
        let e = run_on_protocol(mp.clone(), Model::Rc, name).err().unwrap_or_else(|| panic!("{name} accepted"));
        assert!(e.contains(want), "{name}: {e}");
    }
}
