"""ESF Fig 20: full duplex on application traces. (a) each trace's speed-up
with a full-duplex bus over a half-duplex one, against its mix degree
(min(read ratio, write ratio)); (b) silo's bandwidth, normalised to one bus
direction's maximum, against the mix degree of its windows.

The paper (Sec. V-E): the speed-up rises with the mix degree; for silo,
"when the mix degree increases by 0.1, the overall bandwidth can be improved
by 9%". The traces are fabricsim's stand-ins (``fabricsim.traces``; see
Figs 18/19).
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd

from ... import traces
from ...sweeps import Sweep, build
from .. import Experiment
from ..plots import figure_legend, paper_line
from ..variants import Choice, Mutant, Variant
from ..verdicts import Row, Tolerance, monotone, rises_overall, text
from . import duplex, fig10

SECTION = "Sec. V-E"
APPS = list(traces.APPS)
#: PCIe 5.0 x16 after 128b/130b encoding: one direction's maximum (GB/s)
DIRECTION_GBPS = 32e9 * 16 * 128 / 130 / 8 / 1e9
HEADER = 0.25
ACCESSES = {True: 12_000, False: 40_000}


def silo_at(read_fraction: float) -> traces.StandIn:
    """silo's stand-in held at one of its phases' read fractions."""
    silo = traces.APPS["silo"]
    return dataclasses.replace(silo, name=f"silo-r{read_fraction:g}", read_fraction=read_fraction, phases=())


PHASES = sorted(set(traces.APPS["silo"].phases))

NOTES = f"""\
System: Figs 16/17's (one requester, one PCIe 5.0 x16 bus, {DIRECTION_GBPS:.1f} GB/s per direction, to a switch
with four memories over 256 GB/s links; memories without a media limit; 1024 outstanding requests), full or
half duplex, with header-only packets (read requests, write acknowledgements) of {HEADER:g} x 64 B (16 B, the
header of Figs 7/8; the paper does not give it for its traces). The requester replays one stand-in stream:
{ACCESSES[False]:,} accesses in the full run, {ACCESSES[True]:,} with --quick, the first 10% warm-up.
(a) speed-up = completed bandwidth full duplex / half duplex, the same work in less time; mix degree of
each stand-in as stated (its read fraction, or the mean of its phases').
(b) the paper plots one point per 1000-access window of one silo run. fabricsim measures bandwidth in steady
state, not per window, so it runs silo's stand-in once per phase at that phase's read fraction (silo's
stand-in cycles through {len(PHASES)} read fractions, a phase per 1000 accesses) and regresses the normalised
bandwidth on the mix degree; the slope per +0.1 of mix degree is compared with the paper's 9% (read as 0.09 of
one direction's maximum)."""


def _point(app: str | traces.StandIn, duplex_kind: str, quick: bool, labels: dict) -> list:
    n = ACCESSES[quick]
    cfg = duplex.base(quick)
    name = app if isinstance(app, str) else app.name
    cfg["name"] = f"esf-fig20-{name}-{duplex_kind}"
    cfg["link"][0]["duplex"] = duplex_kind
    path = traces.cached_trace(app, ["req0"], n)
    cfg["workload"].update(
        {
            "pattern": "trace",
            "trace": str(path),
            "requests": n - n // 10,
            "warmup": n // 10,
            "header_overhead": HEADER,
        }
    )
    sw = build(cfg, metrics=["throughput_GBps", "outcome"], name="esf/fig20")
    for p in sw.points:
        p.labels = labels
    return sw.points


def sweep(quick: bool) -> Sweep:
    points = []
    for app in APPS:
        for d in ("full", "half"):
            points += _point(app, d, quick, {"part": "a", "app": app, "duplex": d, "reads": -1.0})
    for r in PHASES:
        points += _point(silo_at(r), "full", quick, {"part": "b", "app": "silo", "duplex": "full", "reads": r})
    return Sweep("esf/fig20", points)


def analyze(df: pd.DataFrame) -> pd.DataFrame:
    a = df[df["part"] == "a"].pivot_table(index="app", columns="duplex", values="throughput_GBps")
    rows = [
        {
            "part": "a",
            "app": app,
            "mix_degree": traces.APPS[app].mix_degree,
            "speedup": float(a.loc[app, "full"] / a.loc[app, "half"]),
            "normalized_bandwidth": float(a.loc[app, "full"] / DIRECTION_GBPS),
        }
        for app in APPS
    ]
    for _, p in df[df["part"] == "b"].iterrows():
        rows.append(
            {
                "part": "b",
                "app": "silo",
                "mix_degree": round(min(p["reads"], 1 - p["reads"]), 6),
                "speedup": float("nan"),
                "normalized_bandwidth": float(p["throughput_GBps"] / DIRECTION_GBPS),
            }
        )
    return pd.DataFrame(rows).sort_values(["part", "mix_degree"]).reset_index(drop=True)


def slope_per_tenth(data: pd.DataFrame) -> float:
    b = data[data["part"] == "b"]
    return float(np.polyfit(b["mix_degree"], b["normalized_bandwidth"], 1)[0] / 10)


def plot(data: pd.DataFrame, fig) -> None:
    ax1, ax2 = fig.subplots(1, 2)
    a = data[data["part"] == "a"]
    ax1.plot(a["mix_degree"], a["speedup"], "o-", label="speed-up (fabricsim)")
    for _, r in a.iterrows():
        ax1.annotate(r["app"], (r["mix_degree"], r["speedup"]), textcoords="offset points", xytext=(4, 4))
    ax1.set_xlabel("mix degree of the trace")
    ax1.set_ylabel("full-duplex speed-up over half duplex (×)")
    ax1.set_title("(a) stand-in traces")
    b = data[data["part"] == "b"]
    ax2.plot(b["mix_degree"], b["normalized_bandwidth"], "o", label="silo phase (fabricsim)")
    xs = np.array([b["mix_degree"].min(), b["mix_degree"].max()])
    slope = slope_per_tenth(data) * 10
    intercept = float(np.polyfit(b["mix_degree"], b["normalized_bandwidth"], 1)[1])
    ax2.plot(xs, intercept + slope * xs, "-", label=f"fit: +{slope / 10:.3f} per 0.1")
    paper_line(ax2, xs, intercept + 0.9 * (xs - xs[0]) + slope * xs[0], "text", label="paper slope: +0.09 per 0.1")
    ax2.set_xlabel("mix degree")
    ax2.set_ylabel("bandwidth / one direction's maximum")
    ax2.set_title("(b) silo, full duplex")
    for ax in (ax1, ax2):
        ax.grid(True, alpha=0.3)
    fig.suptitle("ESF Fig 20: full duplex and the read/write mix of stand-in traces")
    figure_legend(fig)


def compare(data: pd.DataFrame) -> list[Row]:
    a = data[data["part"] == "a"]
    b = data[data["part"] == "b"]
    return [
        Row(
            "ESF Fig 20",
            "(a) full-duplex speed-up rises with the mix degree",
            None,
            text(
                SECTION,
                "when the mix degree of a workload increases, its speed-up compared to a half-duplex "
                "platform also increases",
            ),
            float(a["speedup"].max()),
            # "when the mix degree increases, its speed-up also increases": at every step, as the paper's
            # traces are ordered by mix degree
            monotone([f"{r.app} {r.mix_degree:.2f}" for r in a.itertuples()], list(a["speedup"]), what="speed-up"),
            "A half-duplex bus carries one direction at a time; a full-duplex one carries reads' data one way and "
            "writes' data the other at once, so the more the mix, the more of its second direction is used.",
            "silo's stand-in (mix degree 0.32, the mean over its phases) gains 1.613x, a hair below redis's "
            "1.614x at 0.30: silo alternates phases from 5 % to 50 % writes, and a full-duplex bus's time per "
            "access is convex in the mix (the busier direction sets it), so a phased trace gains less than a "
            "steady one of the same mean mix degree (Jensen). The paper's silo is phased too (Fig 20b); its "
            "per-trace mix degrees are not given.",
        ),
        Row(
            "ESF Fig 20",
            "(b) silo: bandwidth rises with the mix degree",
            None,
            text(SECTION, "there is a high-positive correlation between mix degree and performance"),
            float(b["normalized_bandwidth"].max()),
            rises_overall(list(b["mix_degree"]), list(b["normalized_bandwidth"]), 0.9, "normalised bandwidth"),
            "As (a): writes' data use the direction that reads leave to headers.",
        ),
        Row(
            "ESF Fig 20",
            "(b) silo: bandwidth gain per +0.1 mix degree (÷ one direction's max)",
            0.09,
            text(
                SECTION,
                "When the mix degree increases by 0.1, the overall bandwidth can be improved by 9%",
                precision=0.005,
            ),
            slope_per_tenth(data),
            Tolerance(),
            "Each 0.1 of mix degree moves about a tenth of the traffic's data to the bus's other direction.",
            "with a memory-bound replay the bus is saturated at every mix, so each 0.1 of mix degree adds close "
            "to the header arithmetic's full gain; the paper's silo windows include phases that are not "
            "bus-bound, which a per-window measure of the real trace dilutes.",
        ),
    ]


MUTANTS = [
    Mutant(
        "half-duplex-everywhere",
        "the 'full-duplex' bus is half duplex too: the second direction is gone",
        set={"link[0].duplex": "half"},
        # (a) disagrees without it as well (silo's speed-up a hair below redis's): not named
        flips=["(b) silo: bandwidth rises with the mix degree"],
    ),
]

CHOICES = [
    Choice(
        "header-only packet size",
        f"{HEADER:g} x 64 B (16 B)",
        [Variant("no header", "header-only packets take no bus time", set={"workload.header_overhead": 0.0})],
    ),
    Choice(
        "outstanding requests",
        "1024",
        [Variant("window 64", "64 outstanding: a latency-bound replay", set={"workload.window": 64})],
    ),
    fig10.MEMORY,
]

EXPERIMENT = Experiment(
    seed="esf",
    figure="fig20",
    title="ESF Fig 20: full-duplex speed-up and bandwidth against the mix degree of stand-in traces",
    sweep=sweep,
    analyze=analyze,
    plot=plot,
    compare=compare,
    notes=NOTES,
    mutants=MUTANTS,
    choices=CHOICES,
)
