"""ESF (An et al.): interconnect-layer figures. Parameters not given by the
paper are fabricsim's choices, stated in each experiment's ``notes``."""

#: Results of the paper's evaluation that fabricsim does not reproduce, and why; the report lists them.
NOT_REPRODUCED = [
    (
        "ESF Table IV",
        "CXL-memory execution-time overhead of SPEC CPU2017 gcc and mcf on the CXL hardware, ESF standalone, "
        "gem5-ESF, NUMA emulation and gem5-garnet: it needs the SPEC programs run on real hardware and in gem5 "
        "(a processor model fabricsim does not have), and the PIN traces of ESF standalone are not public.",
    ),
    (
        "ESF Table V",
        "simulation-time overhead of gem5-ESF and gem5-garnet over vanilla gem5: a property of those simulators' "
        "integration with gem5, not of the simulated system.",
    ),
    (
        "ESF Figs 7/8 error figures",
        "the paper's 0.1-10% bandwidth and ≤12% (mean 4.3%) loaded-latency errors are against hardware curves "
        "given only as plots; Figs 7 and 8 compare fabricsim's curves with the paper's stated shapes instead.",
    ),
    (
        "ESF Figs 7/8 local- and remote-DRAM (NUMA) baselines",
        "local and remote DRAM bandwidth falling as the read:write mix rises, and the NUMA emulator's latency "
        "curves 'completely apart' from the CXL hardware's: these are measurements of the paper's Xeon sockets "
        "(DDR5 channels behind the CPU's memory controller, the inter-socket link), which fabricsim does not "
        "model; only the CXL system is simulated.",
    ),
    (
        "ESF Figs 18-20 per-trace values",
        "the throughput, latency and speed-up of each of BTree, liblinear, redis, silo and XSBench, and silo's "
        "per-window points: the traces (collected with the tool of [61]) are not public and the paper gives no "
        "read:write mix per trace; fabricsim replays stated stand-ins and compares only the text's per-topology "
        "numbers (as a geometric mean over the stand-ins) and its trends.",
    ),
]
