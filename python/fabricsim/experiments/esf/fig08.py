"""ESF Fig 8: loaded latency against bandwidth, reads and writes, on the
validation system of Fig 7 (one requester, a bus, four DDR5-4800
endpoints behind a PCIe 5.0 x16 CXL port).

The paper (Sec. IV): ESF's latency-bandwidth curves align with the CXL
hardware's for reads and writes, within 12 % (4.3 % on average), "in both
low and high-intensity scenarios". The hardware curves are only in the
figure, so the rows check the curves' shape: flat at low load, a knee as
the offered load nears the port's capacity."""

from __future__ import annotations

import pandas as pd

from ...sweeps import Sweep, build
from .. import Experiment
from ..plots import figure_legend
from ..variants import Choice, Mutant, Variant
from ..verdicts import Predicate, Row, all_of, monotone, text
from . import fig07

FIG = "ESF Fig 8"
SECTION = "Sec. IV, Results"
# PCIe 5.0 x16 after 128b/130b encoding: the payload capacity of one direction.
PORT_GBPS = 63.0
LOADS = [0.1, 0.3, 0.5, 0.7, 0.8, 0.9, 0.95]
KINDS = {1.0: "read", 0.0: "write"}

NOTES = (
    fig07.NOTES.replace("Fig 7", "Fig 8")
    + """
Loaded latency: MLC's loaded-latency mode varies the load generator's
intensity; here the requester injects open loop (Poisson arrivals) at fixed
fractions of the x16 port's 63.0 GB/s payload capacity, all reads or all
writes, with up to 4096 requests outstanding. The paper's error figures
(at most 12 %, mean 4.3 %) compare with hardware curves we do not have; they
are not reproduced."""
)


def base() -> dict:
    b = fig07.base()
    b["name"] = "esf-fig8"
    b["workload"].update({"injection": "open", "window": 4096})
    return b


def sweep(quick: bool) -> Sweep:
    # 14 short runs, a few seconds in all: --quick runs the full size too.
    sw = build(
        base(),
        grid={"workload.read_fraction": list(KINDS), "workload.rate": [f"{f * PORT_GBPS:.2f}GB/s" for f in LOADS]},
        metrics=["throughput_GBps", "latency_ns.mean", "latency_ns.p99", "outcome"],
        name="esf/fig08",
    )
    for p in sw.points:
        p.labels = {
            "kind": KINDS[p.params["workload.read_fraction"]],
            "offered_GBps": float(p.params["workload.rate"].removesuffix("GB/s")),
        }
    return sw


def analyze(df: pd.DataFrame) -> pd.DataFrame:
    d = df.rename(columns={"latency_ns.mean": "latency_ns", "latency_ns.p99": "p99_ns"})
    d = d.sort_values(["kind", "offered_GBps"])
    return d[["kind", "offered_GBps", "throughput_GBps", "latency_ns", "p99_ns"]].reset_index(drop=True)


def plot(data: pd.DataFrame, fig) -> None:
    ax = fig.subplots(1, 1)
    for kind, marker in (("read", "o"), ("write", "s")):
        d = data[data["kind"] == kind]
        ax.plot(d["throughput_GBps"], d["latency_ns"], marker=marker, label=f"fabricsim, {kind}")
    ax.axvline(PORT_GBPS, color="grey", lw=0.8, ls="--", label="x16 port capacity")
    ax.set_xlabel("bandwidth (GB/s)")
    ax.set_ylabel("mean latency (ns)")
    ax.grid(True, alpha=0.3)
    figure_legend(fig)
    fig.suptitle("ESF Fig 8: loaded latency of the CXL validation system")


def _curve(data: pd.DataFrame, kind: str) -> tuple[list[str], list[float], list[float]]:
    d = data[data["kind"] == kind]
    labels = [f"{x / PORT_GBPS:.0%}" for x in d["offered_GBps"]]
    return labels, list(d["latency_ns"]), list(d["throughput_GBps"])


def _shape(data: pd.DataFrame, kind: str) -> Predicate:
    labels, lat, tput = _curve(data, kind)
    low = lat[1] / lat[0]
    high = lat[-1] / lat[0]
    return all_of(
        "flat at low load (30 % within 15 % of 10 %), rising with load, knee: ≥ 1.4 × at 95 %, "
        "and the load is carried (throughput ≥ 90 % of offered)",
        {
            "low": Predicate("flat", low <= 1.15, f"30 % / 10 % = {low:.2f}"),
            "rise": monotone(labels, lat, what="latency"),
            "knee": Predicate("knee", high >= 1.4, f"95 % / 10 % = {high:.2f}"),
            "carried": Predicate(
                "carried",
                min(t / o for t, o in zip(tput, data[data["kind"] == kind]["offered_GBps"])) >= 0.9,
                f"throughput {tput[-1]:.1f} GB/s at the highest load",
            ),
        },
    )


def compare(data: pd.DataFrame) -> list[Row]:
    why = (
        "Below the port's capacity requests queue rarely, so latency stays near idle; as the offered load nears "
        "the x16 port's 63 GB/s (the data direction: towards the host for reads, away for writes) the port's "
        "queue grows; for reads the DIMMs return data in bursts, which queue at the port towards the host."
    )
    rows = []
    for kind in ("read", "write"):
        _, lat, _ = _curve(data, kind)
        rows.append(
            Row(
                FIG,
                f"{kind} latency-bandwidth curve: flat, then a knee near the port capacity",
                None,
                # The text names the two regimes of the curve; the hardware latencies ESF matches in them are only
                # in the figure, so the row checks that fabricsim's curve has both regimes, not their values.
                text(
                    SECTION,
                    "loaded-latency tests ... by adjusting the requester intensity. The results are shown as "
                    "latency-bandwidth curves ... In both low and high-intensity scenarios, ESF closely reflects "
                    "the average latency observed on the CXL hardware platform",
                ),
                lat[-1] / lat[0],
                _shape(data, kind),
                why,
                if_disagrees=WRITE_KNEE if kind == "write" else "",
            )
        )
    return rows


WRITE_KNEE = (
    "Measured: writes at 95 % of the port's capacity wait ~30 ns more than at 10 % (reads: +240 ns). Nothing "
    "but the x16 port limits writes here (the four DIMMs sustain ~130 GB/s of random writes), a 64 B write "
    "holds the port ~1 ns, and Poisson arrivals at one port queue only ρ/(2(1-ρ)) service times (~10 ns at "
    "95 %). Reads knee because the DIMMs' FR-FCFS scheduling returns data in bursts that queue at the port "
    "towards the host (with 10 TB/s links the read knee vanishes too). A hardware write knee would come from "
    "the device's internal write path (MXC write buffers, DRAM write-to-read turnaround under load), which "
    "ESF calibrates to hardware and this system does not model."
)


MUTANTS = [
    Mutant(
        "no-bottleneck",
        "every link 10 TB/s: the offered loads are a tiny fraction of any capacity, so no knee",
        set={"defaults.link.bandwidth": "10TB/s"},
        flips=["read latency-bandwidth curve: flat, then a knee near the port capacity"],
    ),
]

CHOICES = [
    Choice(
        "arrival process",
        "Poisson",
        [Variant("periodic", "evenly spaced arrivals", set={"workload.arrival": "periodic"})],
    ),
    fig07.PAGE_POLICY,
]

EXPERIMENT = Experiment(
    seed="esf",
    figure="fig08",
    title="ESF Fig 8: loaded latency against bandwidth",
    sweep=sweep,
    analyze=analyze,
    plot=plot,
    compare=compare,
    notes=NOTES,
    mutants=MUTANTS,
    choices=CHOICES,
)
