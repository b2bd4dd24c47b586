"""ESF Fig 7: idle latency and peak bandwidth by read:write mix on the
validation system (Sec. IV): one requester, an interconnect bus, and four
DDR5-4800 memory endpoints behind one PCIe 5.0 x16 CXL port.

The paper's statements: after calibration ESF's idle latency matches the
CXL hardware's; its bandwidth is within 0.1-10 % of the hardware's; and "as
the read-write mixed ratio increases, the bandwidth of CXL hardware
increases synchronously, which is well captured by ESF" (local and remote
DRAM fall instead). The hardware's numbers are only in the figure, so the
rows here check the mechanism, not the absolute values."""

from __future__ import annotations

import pandas as pd

from ...sweeps import Sweep, build
from .. import Experiment
from ..plots import figure_legend
from ..variants import Choice, Mutant, Variant
from ..verdicts import Predicate, Row, monotone, text

FIG = "ESF Fig 7"
SECTION = "Sec. IV, Results"
MIXES = {1.0: "1:0", 0.75: "3:1", 2 / 3: "2:1", 0.5: "1:1"}

# Table III's fixed delays on a read's round trip through one switch:
# requester 10 + cache 12 + controller 40 + 8 port crossings x 25 + 4 bus
# times x 1 + 2 switchings x 20 ns (tests/esf.rs checks the exact sum).
TABLE_III_NS = 306.0

NOTES = """\
The system is examples/esf_mlc.toml, written out below. Modelling choices
(the paper names the parts, not these numbers):
- The bus is one switch; every link is PCIe 5.0 x16 (63.0 GB/s per direction
  after encoding), so the host's x16 port bounds bandwidth as the MXC's
  single x16 port does. Table III's delays: requester 10 ns, cache 12 ns,
  device controller 40 ns, PCIe port 25 ns, bus 1 ns, switching 20 ns.
- Each endpoint is one DDR5-4800 DIMM (two 32-bit subchannels, JEDEC
  timings, open page, FR-FCFS: docs/dram.md) in place of DRAMsim3.
- Read requests and write acknowledgements are 16 B (header overhead 0.25),
  data packets one 64 B line.
- MLC's idle-latency test is one request at a time over random lines; its
  bandwidth test a closed loop of 1024 outstanding requests (enough to
  saturate the x16 port), random 64 B lines over 1 GiB.
- 16 000 measured requests (4 x 4000) after 16 000 warm-up, as the paper.
Not modelled: the local- and remote-DRAM (NUMA) baselines of the figure.
Nothing is tuned for this figure."""


def base() -> dict:
    dimms = [f"dimm{i}" for i in range(4)]
    return {
        "name": "esf-fig7",
        "defaults": {
            "link": {"bandwidth": "PCIe5x16", "latency": "1ns", "port_delay": "25ns"},
            "switch": {"latency": "20ns"},
            "requester": {"issue_latency": "10ns", "cache_latency": "12ns"},
            "memory": {"model": "dram", "dram": "DDR5-4800", "latency": "40ns"},
        },
        "requester": [{"name": "host0"}],
        "switch": [{"name": "bus"}],
        "memory": [{"name": d} for d in dimms],
        "link": [{"a": "host0", "b": "bus"}] + [{"a": "bus", "b": d} for d in dimms],
        "workload": {
            "pattern": "uniform",
            "footprint": "1GiB",
            "read_fraction": 1.0,
            "injection": "closed",
            "window": 1024,
            "warmup": 16000,
            "requests": 16000,
            "header_overhead": 0.25,
        },
    }


def sweep(quick: bool) -> Sweep:
    # The whole grid takes a few seconds: --quick runs the full size too.
    grid_bw = build(
        base(),
        grid={"workload.read_fraction": list(MIXES)},
        metrics=["throughput_GBps", "latency_ns.mean", "outcome"],
        name="esf/fig07",
    )
    idle = build(
        base(),
        grid={"workload.window": [1], "workload.read_fraction": [1.0]},
        metrics=["throughput_GBps", "latency_ns.mean", "outcome"],
        name="esf/fig07",
    )
    for p in grid_bw.points:
        p.labels = {"test": "bandwidth", "mix": MIXES[p.params["workload.read_fraction"]]}
    for p in idle.points:
        p.labels = {"test": "idle", "mix": "1:0"}
    grid_bw.points += idle.points
    return grid_bw


def analyze(df: pd.DataFrame) -> pd.DataFrame:
    d = df.rename(columns={"latency_ns.mean": "latency_ns"})
    bw = d[d["test"] == "bandwidth"].copy()
    order = {m: i for i, m in enumerate(MIXES.values())}
    bw["order"] = bw["mix"].map(order)
    bw = bw.sort_values("order")
    idle = d[d["test"] == "idle"]
    out = bw[["test", "mix", "throughput_GBps", "latency_ns"]].copy()
    out["bandwidth_vs_read_only"] = out["throughput_GBps"] / float(bw["throughput_GBps"].iloc[0])
    return pd.concat([out, idle[["test", "mix", "throughput_GBps", "latency_ns"]]], ignore_index=True)


def plot(data: pd.DataFrame, fig) -> None:
    ax_lat, ax_bw = fig.subplots(1, 2)
    idle = float(data.loc[data["test"] == "idle", "latency_ns"].iloc[0])
    ax_lat.bar([0], [idle], label="fabricsim")
    ax_lat.bar([1], [TABLE_III_NS], color="grey", label="Table III's fixed delays")
    ax_lat.set_xticks([0, 1], ["idle read", "Table III"])
    ax_lat.set_ylabel("ns")
    ax_lat.set_title("idle latency")
    bw = data[data["test"] == "bandwidth"]
    ax_bw.plot(range(len(bw)), bw["throughput_GBps"], marker="o", label="fabricsim, CXL (full duplex)")
    ax_bw.set_xticks(range(len(bw)), list(bw["mix"]))
    ax_bw.set_xlabel("read:write ratio")
    ax_bw.set_ylabel("GB/s")
    ax_bw.set_title("peak bandwidth")
    for ax in (ax_lat, ax_bw):
        ax.grid(True, axis="y", alpha=0.3)
    figure_legend(fig)
    fig.suptitle("ESF Fig 7: idle latency and bandwidth of the CXL validation system")


def compare(data: pd.DataFrame) -> list[Row]:
    bw = data[data["test"] == "bandwidth"]
    idle = float(data.loc[data["test"] == "idle", "latency_ns"].iloc[0])
    # Above Table III's fixed part by at least the DRAM's tRCD + tCL + tBURST
    # (36 ns) and the links' serialisation, and by at most one row conflict
    # (tRP, 16 ns) and a refresh's share more.
    lo, hi = TABLE_III_NS + 36.0, TABLE_III_NS + 36.0 + 40.0
    return [
        Row(
            FIG,
            "idle read latency, ns",
            None,
            text(SECTION, "after calibration, ESF exhibits an outstanding latency accuracy"),
            idle,
            Predicate(
                f"{lo:.0f} ns ≤ idle ≤ {hi:.0f} ns (Table III + DRAM idle + links)",
                lo <= idle <= hi,
                f"{idle:.1f} ns",
            ),
            "The idle path is Table III's delays plus the DRAM's idle read and the links' serialisation; the "
            "hardware value is only in the figure.",
        ),
        Row(
            FIG,
            "bandwidth rises with the read:write mix",
            None,
            text(
                SECTION,
                "as the read-write mixed ratio increases, the bandwidth of CXL hardware increases synchronously, "
                "which is well captured by ESF",
            ),
            float(bw["bandwidth_vs_read_only"].iloc[-1]),
            monotone(list(bw["mix"]), list(bw["throughput_GBps"]), what="peak bandwidth", min_change=0.3),
            "Reads return data towards the host and writes carry it away; the full-duplex x16 port carries both "
            "at once, so a mix fills both directions (the DIMMs' 154 GB/s are not the limit).",
        ),
    ]


MUTANTS = [
    Mutant(
        "half-duplex-port",
        "the host's port is half duplex: reads and writes share one direction's capacity",
        set={"link[0].duplex": "half"},
        flips=["bandwidth rises with the read:write mix"],
    ),
]

# The validation system's page-policy alternative, shared with Fig 8.
PAGE_POLICY = Choice(
    "DRAM page policy",
    "open page",
    [Variant("closed", "closed page (auto-precharge)", set={"defaults.memory.page": "closed"})],
)

CHOICES = [
    PAGE_POLICY,
    Choice(
        "request and acknowledgement header",
        "16 B (0.25 of a line)",
        [Variant("8B", "8 B headers (0.125 of a line)", set={"workload.header_overhead": 0.125})],
    ),
]

EXPERIMENT = Experiment(
    seed="esf",
    figure="fig07",
    title="ESF Fig 7: idle latency and bandwidth by read:write mix",
    sweep=sweep,
    analyze=analyze,
    plot=plot,
    compare=compare,
    notes=NOTES,
    mutants=MUTANTS,
    choices=CHOICES,
)
