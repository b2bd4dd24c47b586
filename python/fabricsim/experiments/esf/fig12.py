"""ESF Fig 12: latency by hop count when the five topologies deliver the same
bisection bandwidth (scale 16).

The paper (Sec. V-A) shows only each hop class's average latency, and says:
the averages of chain, tree and ring fall (against Fig 11); the highest hop
count still adds about 2x latency in the chain and 1x in the tree and the
ring over the lowest; spine-leaf and fully-connected keep latency stable.
"""

from __future__ import annotations

import pandas as pd

from ...sweeps import Sweep, build
from .. import Experiment
from ..plots import figure_legend
from ..variants import Choice, Mutant, Variant
from ..verdicts import Predicate, Row, Tolerance, greater, text
from . import fig10, fig11

SECTION = "Sec. V-A"
FIG = "ESF Fig 12"
#: Links crossing the cut between the requesters' half and the memories' half
#: of each scale-16 split system (Fig 10's shapes).
CUT_LINKS = {"chain": 1, "tree": 1, "ring": 2, "spine_leaf": 4, "fully_connected": 64}
#: The common bisection: spine-leaf's at Fig 11's 64 GB/s ports (4 leaf uplinks).
BISECTION_GBPS = CUT_LINKS["spine_leaf"] * fig10.PORT_GBPS

NOTES = f"""\
Systems: Fig 11's (scale 16, split placement, read-only uniform random requests, 1024 outstanding per
requester), with the switch-to-switch links of each topology at {BISECTION_GBPS:g} GB/s divided by the links
crossing its bisection ({", ".join(f"{fig10.LABELS[k]} {v}" for k, v in CUT_LINKS.items())}), so every
topology's bisection carries {BISECTION_GBPS:g} GB/s, spine-leaf's at 64 GB/s ports (our choice of the common
value: the paper gives none). Edge ports (requester and memory links) stay at 64 GB/s
(`topology.switch_link_bandwidth`): the paper says the maximum port bandwidths differ between topologies
but not whether edge ports change too. The Fig 11 systems run beside them for the "decreased" rows.
Hop classes, queueing and run sizes as in Fig 11. With split placement the tree, spine-leaf and
fully-connected have one hop class each (every route crosses the root, a spine, or one direct link);
a single class has no spread, which is the paper's reason for spine-leaf and fully-connected
("fewer hops"), but leaves the tree's "1x" unmeasurable (its row says so)."""


def sweep(quick: bool) -> Sweep:
    base = fig11.sweep(quick)
    points = []
    for p in base.points:
        p.labels = {**p.labels, "system": "fig11"}
        points.append(p)
    for kind in fig10.TOPOLOGIES:
        cfg = fig10.base(kind, fig11.N, 4000)
        cfg["topology"]["switch_link_bandwidth"] = f"{BISECTION_GBPS / CUT_LINKS[kind]:g}GB/s"
        sw = build(
            cfg,
            metrics=["throughput_GBps", "latency_ns.mean", "outcome"],
            name="esf/fig12",
            extract="fabricsim.experiments.esf.fig11:hop_metrics",
        )
        for q in sw.points:
            q.labels = {"topology": kind, "system": "iso"}
        points += sw.points
    return Sweep("esf/fig12", points)


def analyze(df: pd.DataFrame) -> pd.DataFrame:
    parts = []
    for system in ("iso", "fig11"):
        d = fig11.analyze(df[df["system"] == system])
        d.insert(0, "system", system)
        parts.append(d)
    return pd.concat(parts, ignore_index=True)


def plot(data: pd.DataFrame, fig) -> None:
    axes = fig.subplots(1, len(fig10.TOPOLOGIES), sharey=True)
    iso = data[data["system"] == "iso"]
    for ax, kind in zip(axes, fig10.TOPOLOGIES):
        d = iso[iso["topology"] == kind]
        ax.bar([str(h) for h in d["hops"]], d["mean_ns"] / 1e3, color="tab:blue", label="mean latency, iso-bisection")
        ax.set_title(f"{fig10.LABELS[kind]} ({BISECTION_GBPS / CUT_LINKS[kind]:g} GB/s)")
        ax.set_xlabel("hops")
        ax.grid(True, axis="y", alpha=0.3)
    axes[0].set_ylabel("mean latency (µs)")
    fig.suptitle(f"ESF Fig 12: latency by hop count, bisection {BISECTION_GBPS:g} GB/s (no paper values in the text)")
    figure_legend(fig)


def _overall(data: pd.DataFrame, system: str, kind: str) -> float:
    d = data[(data["system"] == system) & (data["topology"] == kind)]
    return float((d["mean_ns"] * d["requests"]).sum() / d["requests"].sum())


def _classes(data: pd.DataFrame, kind: str) -> pd.DataFrame:
    return fig11.classes(data[data["system"] == "iso"], kind)


def _overhead(data: pd.DataFrame, kind: str) -> float:
    """Latency of the highest hop count over the lowest's, minus 1 (the paper's "2x", "1x")."""
    d = _classes(data, kind)
    return float(d["mean_ns"].iloc[-1] / d["mean_ns"].iloc[0] - 1)


QUOTE_OVERHEAD = (
    "increasing the hop number can still cause congestion on critical paths, incur significant latency overhead "
    "(i.e., about 2x in chain and 1x in tree and ring compared to the latency with lowest hop number)"
)


def compare(data: pd.DataFrame) -> list[Row]:
    rows = []
    for kind in ("chain", "tree", "ring"):
        before, after = _overall(data, "fig11", kind), _overall(data, "iso", kind)
        rows.append(
            Row(
                FIG,
                f"{fig10.LABELS[kind]}: average latency below Fig 11's",
                None,
                text(SECTION, "the average latency values of chain, tree and ring are decreased"),
                after / before,
                greater(before, after, "Fig 11 mean latency (ns)", "iso-bisection mean latency"),
                f"Its bisection links are {BISECTION_GBPS / CUT_LINKS[kind] / fig10.PORT_GBPS:g}× as wide as Fig 11's "
                "ports, so the bridge drains faster and requests wait less.",
            )
        )
    for kind, paper in (("chain", 2.0), ("tree", 1.0), ("ring", 1.0)):
        n = len(_classes(data, kind))
        rows.append(
            Row(
                FIG,
                f"{fig10.LABELS[kind]}: highest hops' latency overhead over the lowest",
                paper,
                text(SECTION, QUOTE_OVERHEAD),
                _overhead(data, kind),
                Tolerance(),
                "Longer routes still merge with other flows on their way to the bisection and wait at each "
                "round-robin merge.",
                "with split placement every tree route crosses the root, so there is one hop class and no "
                "overhead to measure (the robustness table's interleave placement gives four classes)."
                if n < 2
                else "the lowest class is the pair of switches beside the cut, whose requests barely queue, while "
                "every longer class waits at merges on the way: in fabricsim the overhead over that class is "
                "larger than the paper's.",
            )
        )
    for kind in ("spine_leaf", "fully_connected"):
        d = _classes(data, kind)
        spread = float(d["mean_ns"].max() / d["mean_ns"].min() - 1)
        rows.append(
            Row(
                FIG,
                f"{fig10.LABELS[kind]}: latency stable across hop counts",
                None,
                text(SECTION, "spine-leaf and fully-connected require fewer hops ... provide high stability"),
                spread,
                Predicate(
                    "max / min hop-class latency - 1 ≤ 25%",
                    spread <= 0.25,
                    f"{spread:.1%} over {len(d)} hop class(es): {', '.join(str(h) for h in d['hops'])}",
                ),
                "Every route is as short as the shape allows (leaf-spine-leaf, or one direct link), so there are "
                "few hop classes and they share the same links.",
            )
        )
    return rows


def _narrow_fc(cfg: dict, labels) -> None:
    """Fully-connected's switch links become a chain's: its routes gain hops and merge."""
    cfg["topology"]["kind"] = "chain"


MUTANTS = [
    Mutant(
        "no-wider-bisection",
        "the iso-bisection systems keep Fig 11's 64 GB/s switch links, so nothing gets wider",
        set={"topology.switch_link_bandwidth": "64GB/s"},
        when=lambda labels: labels.get("system") == "iso",
        flips=[
            "Chain: average latency below Fig 11's",
            "Tree: average latency below Fig 11's",
            "Ring: average latency below Fig 11's",
        ],
    ),
    Mutant(
        "fc-as-chain",
        "the fully-connected fabric becomes a chain of its switches: many hop classes, merging routes",
        edit=_narrow_fc,
        when=lambda labels: labels.get("topology") == "fully_connected",
        flips=["FC: latency stable across hop counts"],
    ),
]

CHOICES = [
    Choice(
        "endpoint placement",
        'attach = "split" (as Figs 10 and 11)',
        [
            Variant(
                "interleave",
                'attach = "interleave": requester i and memory i on the same switch',
                set={"topology.attach": "interleave"},
            )
        ],
    ),
    fig10.WINDOW,
]

EXPERIMENT = Experiment(
    seed="esf",
    figure="fig12",
    title="ESF Fig 12: latency by hop count at equal bisection bandwidth, scale 16",
    sweep=sweep,
    analyze=analyze,
    plot=plot,
    compare=compare,
    notes=NOTES,
    mutants=MUTANTS,
    choices=CHOICES,
)
