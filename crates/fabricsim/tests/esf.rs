//! ESF's validation system (examples/esf_mlc.toml) against the numbers it
//! is built from: Table III's delays, the links and the DRAM's timings.

use crate::common;
use common::*;
use fabricsim::agents::memory::dram::Preset;
use fabricsim::config::units::Bandwidth;

fn example() -> String {
    std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/esf_mlc.toml")).unwrap()
}

/// A lone CXL read through one switch takes exactly: requester process,
/// four PCIe port crossings, two bus times and the switching time each way,
/// the serialisation of a 16 B request and a 64 B response on each link,
/// the device controller, the DRAM's front-end clock + tRCD + tCL +
/// tBURST, and the cache
/// access. Closed page and no refresh make every read see that idle time.
#[test]
fn zero_load_cxl_read_is_table_iii_plus_links_plus_dram_idle() {
    let r = run_with(
        &example(),
        &[
            "workload.window=1",
            "workload.warmup=0",
            "workload.requests=400",
            "defaults.memory.page=closed",
            "defaults.memory.trefi=0ns",
        ],
    );
    completed(&r);
    let ns = 1_000;
    let (issue, cache, controller, port, bus, switch) = (10 * ns, 12 * ns, 40 * ns, 25 * ns, ns, 20 * ns);
    let x16 = Bandwidth::parse("PCIe5x16").unwrap();
    let hop = |bytes: u64| x16.serialize(bytes) + bus + 2 * port;
    let request = hop(16) + switch + hop(16);
    let response = hop(64) + switch + hop(64);
    let d = Preset::find("DDR5-4800").unwrap().params();
    let dram = d.tck + d.trcd + d.tcl + d.tburst;
    let expected = issue + request + controller + dram + response + cache;
    let h = r.all_latency();
    assert_eq!((h.min, h.max), (expected, expected));
    // Table III's fixed part alone: 10 + 12 + 40 + 4 x 25 x 2 ports + 4 x 1 + 2 x 20 ns.
    assert_eq!(issue + cache + controller + 8 * port + 4 * bus + 2 * switch, 306 * ns);
}
