"""RLSQ Fig 6: key-value GET throughput (Validation: READ1 = header and
item, READ2 = the header again) with the reads ordered by the NIC, by the
root complex (RC) or speculatively by the root complex (RC-opt).

(a) one client QP, batches of 100 GETs, 64 B to 8 KiB objects; (b) 1 to 16
QPs, 256 B objects; (c) 16 QPs, batches of 500. The paper (§6.3): RC is
29.1× and RC-opt 50.9× faster than NIC ordering at 64 B with one QP; more
QPs help the NIC most but never enough; with 16 QPs and batches of 500
only RC-opt approaches the 100 Gb/s link for small objects."""

from __future__ import annotations

import pandas as pd

from ...sweeps import Sweep, build
from .. import Experiment
from ..plots import figure_legend
from ..variants import Choice, Mutant, Variant
from ..verdicts import MODEL_TOLERANCE, Predicate, Row, Tolerance, all_of, flat, greater, policy_tolerance, text
from . import system

FIG = "RLSQ Fig 6"
SECTION = "§6.3, Key-Value Store"
VARIANTS = ["nic", "rc", "rc-opt"]
LABEL = {"nic": "NIC", "rc": "RC", "rc-opt": "RC-opt"}
SIZES = [64, 128, 256, 512, 1024, 2048, 4096, 8192]
QUICK_SIZES = [64, 1024]
QPS = [1, 2, 4, 8, 16]
QUICK_QPS = [1, 16]

NOTES = (
    system.__doc__
    + """
The GETs (``workload.pattern = "kvs_gets"``, ``workloads/kvs_gets.rs``):
- a Validation object is an 8 B header version then the item, in whole
  lines; READ1 reads them all, READ2 the header line again (a 64 B item:
  3 line reads);
- every line goes with the acquire bit, as the paper's NIC orders every
  line of a DMA (Fig 5); a QP issues a batch's reads back to back, waits
  for all of them, then 1 µs;
- keys are uniform over a table that fills Table 2's L2 (256 KiB): the
  host wrote it, so the root complex's reads hit there (7 ns); with the
  table in DRAM instead (a choice below) RC's serial accesses cost an L2
  miss each;
- each QP runs 1000 GETs (--quick: 300; Fig 6c's batches of 500: 1000,
  two batches).

Throughput is in GETs per second and in Gb/s of line data read over
PCIe (the lines a GET reads, 64 B each); the paper does not say which
bytes its Gb/s count. Unordered reads (no acquire) would be as fast as
RC-opt but tear objects (see the checker's Validation row), so they are
not plotted.
"""
)


def _gets(panel: str, quick: bool) -> int:
    if panel == "c":
        return 1000
    return 300 if quick else 1000


def sweep(quick: bool) -> Sweep:
    sizes = QUICK_SIZES if quick else SIZES
    panels = [("a", 1, 100, s) for s in sizes]
    panels += [("b", q, 100, 256) for q in (QUICK_QPS if quick else QPS)]
    panels += [("c", 16, 500, s) for s in sizes]
    points = []
    for panel, qps, batch, size in panels:
        sw = build(
            system.kvs("rc-opt", "validation", size, qps=qps, batch=batch, gets=_gets(panel, quick)),
            grid={"protocol.pcie.variant": VARIANTS},
            metrics=["sim_time_ps", "throughput_GBps", "outcome"],
            name="rlsq/fig06",
        )
        for p in sw.points:
            p.labels = {
                "panel": panel,
                "qps": qps,
                "batch": batch,
                "object_bytes": size,
                "variant": p.params["protocol.pcie.variant"],
            }
        points += sw.points
    return Sweep("rlsq/fig06", points)


def analyze(df: pd.DataFrame) -> pd.DataFrame:
    d = df.copy()
    d["read_gbps"] = d["throughput_GBps"] * 8
    reads = d["object_bytes"].map(lambda s: system.reads_per_get("validation", int(s)))
    d["gets_mops"] = d["throughput_GBps"] * 1e9 / 64 / reads / 1e6
    d["get_gbps"] = d["gets_mops"] * 1e6 * d["object_bytes"] * 8 / 1e9
    d = d.sort_values(["panel", "variant", "qps", "object_bytes"])
    return d[["panel", "variant", "qps", "batch", "object_bytes", "gets_mops", "get_gbps", "read_gbps"]].reset_index(
        drop=True
    )


def plot(data: pd.DataFrame, fig) -> None:
    for i, (panel, x, title) in enumerate(
        [
            ("a", "object_bytes", "(a) 1 QP, batch 100"),
            ("b", "qps", "(b) 256 B, batch 100"),
            ("c", "object_bytes", "(c) 16 QPs, batch 500"),
        ]
    ):
        ax = fig.add_subplot(1, 3, i + 1)
        for v in VARIANTS:
            d = data[(data["panel"] == panel) & (data["variant"] == v)]
            ax.plot(d[x], d["read_gbps"], marker="o", label=LABEL[v] if i == 0 else None)
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("object size (bytes)" if x == "object_bytes" else "queue pairs")
        if i == 0:
            ax.set_ylabel("line data read (Gb/s)")
        ax.set_title(title, fontsize=9)
        ax.grid(True, alpha=0.3)
    figure_legend(fig)
    fig.suptitle("RLSQ Fig 6: key-value GETs (Validation)")


def _at(data: pd.DataFrame, panel: str, v: str, col: str, key: str) -> dict[int, float]:
    d = data[(data["panel"] == panel) & (data["variant"] == v)]
    return dict(zip(d[key], d[col]))


#: "robust performance gains": by more than the model tolerance, a gain the model's own error could not make
ROBUST = MODEL_TOLERANCE
#: Fig 6c's link: the row comparing RC-opt with it, and the threshold the other designs must stay under
LINK = text(SECTION, "approaching the 100 Gb/s link that modern NICs support")


def compare(data: pd.DataFrame) -> list[Row]:
    a = {v: _at(data, "a", v, "gets_mops", "object_bytes") for v in VARIANTS}
    b = {v: _at(data, "b", v, "gets_mops", "qps") for v in VARIANTS}
    c = {v: _at(data, "c", v, "read_gbps", "object_bytes") for v in VARIANTS}
    sizes, qps, c_sizes = sorted(a["nic"]), sorted(b["nic"]), sorted(c["nic"])
    small = sizes[0]
    nic_line_ns = 1e3 / (a["nic"][small] * system.reads_per_get("validation", small))
    gain = {v: b[v][qps[-1]] / b[v][qps[0]] for v in VARIANTS}
    every = {
        **{f"(a) {x} B": {v: a[v][x] for v in VARIANTS} for x in sizes},
        **{f"(b) {q} QPs": {v: b[v][q] for v in VARIANTS} for q in qps},
        **{f"(c) {x} B": {v: c[v][x] for v in VARIANTS} for x in c_sizes},
    }
    link_rel, _ = policy_tolerance(LINK, 100.0)
    approach = 100.0 * (1 - link_rel)
    rows = [
        Row(
            FIG,
            "(a) RC's GET throughput ÷ NIC's, 64 B, 1 QP",
            29.1,
            text(
                SECTION,
                "Ordering at the RC reduces the stall between fetching cache lines substantially improving "
                "performance by 29.1",
            ),
            a["rc"][small] / a["nic"][small],
            Tolerance(),
            "The NIC waits a round trip of the I/O bus for every line; the RLSQ serializes only its accesses "
            "to the host's L2 (7 ns and 4 ns of on-die links a line), and the NIC pipelines the rest.",
            "fabricsim's RLSQ holds each acquire for its whole access to the host: the L2's 7 ns, 4 ns of on-die "
            "links and the 80 B completion's transfer on them, ≈ 15 ns a line (a batch of 100 GETs, 300 lines, "
            "takes ≈ 5.1 µs besides its 1 µs gap, the same in the 1000-GET run). The paper's 29.1× over its NIC's "
            "440 ns a line implies ≈ 10 ns a line; Table 2 gives the L2's 20 cycles but not the timing of gem5's "
            "crossbar between the root complex and the L2. RC-opt, which does not serialize those accesses, agrees.",
        ),
        Row(
            FIG,
            "(a) RC-opt's GET throughput ÷ NIC's, 64 B, 1 QP",
            50.9,
            text(SECTION, "making it 50.9"),
            a["rc-opt"][small] / a["nic"][small],
            Tolerance(),
            "RC-opt reads every line of a batch at once and completes them in order: a batch costs the NIC's "
            "issue of its 300 reads (3 ns each), one round trip and the 1 µs gap.",
        ),
        Row(
            FIG,
            "(a) NIC ordering's stall per line (ns)",
            440.0,
            text(SECTION, "results in a 440 ns synchronous stall"),
            nic_line_ns,
            Tolerance(),
            "Two 200 ns crossings of the I/O bus, the root complex's 17 ns, the L2 hit and the issue and "
            "serialization of the request and its completion (plus the batch gap spread over 300 lines).",
        ),
        Row(
            FIG,
            "RC-opt above RC and NIC in every configuration of (a), (b) and (c)",
            None,
            text("Fig 6 caption", "Across all these configurations RC-opt shows robust performance gains"),
            min(vs["rc-opt"] / max(vs["rc"], vs["nic"]) for vs in every.values()),
            all_of(
                f"RC-opt > RC and NIC by > {ROBUST:.0%} at every object size and QP count of (a), (b) and (c)",
                {
                    k: greater(
                        vs["rc-opt"], max(vs["rc"], vs["nic"]), "RC-opt", "the better of RC and NIC", margin=ROBUST
                    )
                    for k, vs in every.items()
                },
            ),
            "RC-opt removes the stall RC still pays on every line (its serial host accesses) and the NIC's round "
            'trip per line; "robust" is read as more than the model\'s own 15 % tolerance.',
        ),
        Row(
            FIG,
            "(a) NIC ordering cannot be amortized over larger objects",
            None,
            text(SECTION, "it cannot be amortized across larger items"),
            None,
            flat(
                sizes,
                [a["nic"][s] * system.reads_per_get("validation", s) for s in sizes],
                0.1,
                "NIC's line reads per second",
            ),
            "Every line of an object waits for the previous line's completion: the lines per second stay "
            "the same at every size.",
        ),
        Row(
            FIG,
            "(b) more QPs help NIC ordering the most",
            None,
            text("§6.3, Fig 6b", "Increasing client count helps NIC-based ordering the most"),
            gain["nic"],
            all_of(
                f"NIC's gain from {qps[0]} to {qps[-1]} QPs exceeds RC's and RC-opt's",
                {
                    "rc": greater(gain["nic"], gain["rc"], "NIC's gain", "RC's"),
                    "rc-opt": greater(gain["nic"], gain["rc-opt"], "NIC's gain", "RC-opt's"),
                },
            ),
            "Each QP stops and waits on its own, so QPs overlap their round trips; the RLSQ's serial "
            "accesses (RC) and the I/O bus (RC-opt) are shared by all QPs.",
        ),
        Row(
            FIG,
            "(b) NIC ordering never catches up with RC",
            None,
            text("§6.3, Fig 6b", "the increased parallelism is not enough for NIC ordering to make up"),
            None,
            all_of(
                "NIC < RC at every QP count", {f"{q} QPs": greater(b["rc"][q], b["nic"][q], "RC", "NIC") for q in qps}
            ),
            "16 QPs overlap 16 stalls of ≈ 440 ns; the RLSQ serializes ≈ 11 ns per line for all of them.",
        ),
        Row(
            FIG,
            "(c) RC-opt's line data read at 64 B, 16 QPs, batch 500 (Gb/s)",
            100.0,
            LINK,
            c["rc-opt"][small],
            Tolerance(),
            "With 16 QPs the I/O bus is the limit: an 80 B completion per 64 B line at 16 GB/s is 102 Gb/s "
            "of line data.",
        ),
        # The "only" of the claim: RC-opt's own value is the row above; this row's values are NIC's and RC's.
        Row(
            FIG,
            "(c) only RC-opt approaches the link at 64 B: NIC and RC do not",
            None,
            text(SECTION, "RC-opt is the only approach that maintains correctness of the protocol while approaching"),
            max(c["nic"][small], c["rc"][small]),
            all_of(
                f"NIC and RC below {approach:.0f} Gb/s at 64 B (the lower edge of the row above's tolerance)",
                {
                    LABEL[v]: Predicate(
                        f"{LABEL[v]} < {approach:.0f} Gb/s", c[v][small] < approach, f"{c[v][small]:.3g} Gb/s"
                    )
                    for v in ("nic", "rc")
                },
            ),
            "RC's serial L2 accesses (≈ 11 ns a line) cap it near 45 Gb/s of lines, and NIC ordering at 16 "
            "overlapped stalls.",
        ),
    ]
    return rows


MUTANTS = [
    Mutant(
        "rc-opt-without-speculation",
        "RC-opt's runs issue nothing after an acquire until it completes (the RC variant): no speculation",
        set={"protocol.pcie.variant": "rc"},
        when=lambda labels: labels.get("variant") == "rc-opt",
        flips=[
            "(a) RC-opt's GET throughput ÷ NIC's, 64 B, 1 QP",
            "(c) RC-opt's line data read at 64 B, 16 QPs, batch 500 (Gb/s)",
        ],
    ),
    Mutant(
        "ordered-at-the-nic",
        "RC's runs order at the NIC instead (stop and wait per line)",
        set={"protocol.pcie.variant": "nic"},
        when=lambda labels: labels.get("variant") == "rc",
        # (a)'s RC ÷ NIC (29.1×) already disagrees on the default system (see its row)
        flips=["(b) NIC ordering never catches up with RC"],
    ),
]

CHOICES = [
    Choice(
        "the measurement: GETs over the whole run",
        "300 GETs a QP in (a) and (b) (--quick; 1000 full): three batches, the run ending at the last batch's "
        "completion, without its gap",
        [
            Variant(
                "1000 GETs",
                "ten batches a QP in (a) and (b), as the full run: the last batch's missing gap weighs a third as much",
                set_per_point=lambda labels: {
                    "workload.requests": 1000 * system.reads_per_get("validation", int(labels["object_bytes"]))
                },
                when=lambda labels: labels.get("panel") in ("a", "b"),
            )
        ],
    ),
    Choice(
        "where the KVS table lives",
        "in the host's L2 (256 KiB, written by the host)",
        [
            Variant(
                "DRAM",
                "the table misses the L2: every read of the root complex costs 7 + 75 ns",
                set={"protocol.pcie.host_cached": "0B"},
            )
        ],
    ),
    Choice(
        "the host's L2 hit time",
        "7 ns (20 cycles at 3 GHz)",
        [
            Variant(
                "14 ns", "the hit plus the memory bus (7 cycles) each way", set={"protocol.pcie.host_latency": "14ns"}
            )
        ],
    ),
]

EXPERIMENT = Experiment(
    seed="rlsq",
    figure="fig06",
    title="RLSQ Fig 6: key-value GETs",
    sweep=sweep,
    analyze=analyze,
    plot=plot,
    compare=compare,
    notes=NOTES,
    mutants=MUTANTS,
    choices=CHOICES,
)
