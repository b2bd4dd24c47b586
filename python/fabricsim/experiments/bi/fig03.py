"""BI Fig 3: per-cache-line cost of memory and cache operations (§2.2).

(A) random loads over a working set, and the same loads each preceded by a
clflush of its line ("flush+read"), against the working set; (B) clflush
of N lines left read (r), modified (m) or not cached (i), and clflushopt
of N read lines followed by one mfence, per line, against N.

The paper: a load's cost is "mainly a function of the level of cache in
which the load resolves"; flushing before each load makes it run "at
memory-speed"; invalidated lines cost clflush the most (the broadcast),
then modified (the write-back), then read; clflushopt's single barrier
"dominates" small batches and is "marginalized" in large ones."""

from __future__ import annotations

import pandas as pd

from ...sweeps import Sweep, build
from .. import Experiment
from ..plots import figure_legend
from ..variants import Choice, Mutant, Variant
from ..verdicts import Predicate, Row, all_of, monotone, ordering, text
from . import system

FIG = "BI Fig 3"
KIB, MIB = 1 << 10, 1 << 20
#: working sets: inside L1, L2, L3, and beyond (the paper's caches: 32 KB, 1 MB, 38.5 MB)
WS = [16 * KIB, 256 * KIB, 8 * MIB, 256 * MIB]
WS_QUICK = [16 * KIB, 256 * KIB, 8 * MIB, 128 * MIB]
NS = [1, 4, 16, 64, 256, 1024, 4096]
NS_QUICK = [1, 16, 256, 1024]
B_SERIES = {
    "clflush r": ("clflush", "r"),
    "clflush m": ("clflush", "m"),
    "clflush i": ("clflush", "i"),
    "clflushopt+mfence r": ("clflushopt", "r"),
}
SOCKETS = 2


def _point(name: str, bench: dict, labels: dict):
    sw = build(
        system.superdome(sockets=SOCKETS, bench=bench),
        metrics=[],
        name=name,
        extract="fabricsim.experiments.bi.system:bench_metrics",
    )
    (p,) = sw.points
    p.labels = labels
    return p


def sweep(quick: bool) -> Sweep:
    ops = 2000 if quick else 20000
    pts = []
    for ws in WS_QUICK if quick else WS:
        for series, flush in (("read", False), ("flush+read", True)):
            bench = {"kind": "read", "working_set": f"{ws}B", "ops": ops, "flush": flush}
            pts.append(_point("bi/fig03", bench, {"panel": "A", "series": series, "x": ws}))
    # the memory's own latency: loads of lines no cache holds
    cold = {"kind": "read", "working_set": "256MiB", "ops": 200, "warm": False, "sequential": True}
    pts.append(_point("bi/fig03", cold, {"panel": "A", "series": "memory", "x": 0}))
    budget = 2048 if quick else 16384
    for n in NS_QUICK if quick else NS:
        for series, (op, state) in B_SERIES.items():
            bench = {"kind": "flush", "op": op, "state": state, "lines": n, "reps": max(2, budget // n)}
            pts.append(_point("bi/fig03", bench, {"panel": "B", "series": series, "x": n}))
    return Sweep("bi/fig03", pts)


def analyze(df: pd.DataFrame) -> pd.DataFrame:
    d = df.sort_values(["panel", "series", "x"])
    return d[["panel", "series", "x", "ns_per_op", "outcome", "done"]].reset_index(drop=True)


def series(data: pd.DataFrame, panel: str, name: str) -> dict:
    d = data[(data["panel"] == panel) & (data["series"] == name)]
    return dict(zip(d["x"], d["ns_per_op"]))


def plot(data: pd.DataFrame, fig) -> None:
    a, b = fig.subplots(1, 2)
    for name in ("read", "flush+read"):
        s = series(data, "A", name)
        xs = sorted(s)
        a.plot([x / KIB for x in xs], [s[x] for x in xs], marker="o", label=name)
    a.set_xscale("log")
    a.set_yscale("log")
    a.set_xlabel("working set (KiB)")
    a.set_ylabel("ns per cache line")
    a.set_title("(A) memory access")
    for name in B_SERIES:
        s = series(data, "B", name)
        xs = sorted(s)
        b.plot(xs, [s[x] for x in xs], marker="o", label=name)
    b.set_xscale("log")
    b.set_yscale("log")
    b.set_xlabel("cache lines")
    b.set_ylabel("ns per cache line")
    b.set_title("(B) cache operations")
    for ax in (a, b):
        ax.grid(True, alpha=0.3)
    figure_legend(fig)
    fig.suptitle("BI Fig 3: per-cache-line overhead of memory and cache operations")


def compare(data: pd.DataFrame) -> list[Row]:
    rd, fr = series(data, "A", "read"), series(data, "A", "flush+read")
    mem = series(data, "A", "memory")[0]
    xs = sorted(rd)
    steps = {
        f"{x0 // KIB} KiB → {x1 // KIB} KiB": Predicate(
            "≥ 1.5×", rd[x1] >= 1.5 * rd[x0], f"{rd[x0]:.3g} → {rd[x1]:.3g} ns"
        )
        for x0, x1 in zip(xs, xs[1:])
    }
    n_max = max(series(data, "B", "clflush r"))
    b = {name: series(data, "B", name) for name in B_SERIES}
    opt = b["clflushopt+mfence r"]
    ns = sorted(opt)
    return [
        Row(
            FIG,
            "A: a load's cost rises in steps at the L1, L2 and L3 capacities",
            None,
            text("§2.2", "mainly a function of the level of cache in which the load resolves"),
            rd[xs[-1]] / rd[xs[0]],
            all_of(
                "read cost rises at each working set past a cache's capacity, by ≥ 1.5× a step",
                {"series": monotone(xs, [rd[x] for x in xs]), **steps},
            ),
            "Warm caches: inside L1 a load costs L1's 4 cycles, then L2's 14, L3's 22 ns; past L3 most loads "
            "go to the socket's memory (90 ns).",
        ),
        Row(
            FIG,
            "A: flush+read runs at memory speed at every working set",
            None,
            text(
                "§2.2",
                "the performance impact of these instructions and subsequent accesses to the cache-lines are "
                "significant, as they operate at memory-speed",
            ),
            max(fr.values()) / mem,
            all_of(
                "flush+read between 0.8 × and 2 × a memory load at every working set (memory speed, not a cache's "
                "nor a multiple of memory's), and ≥ 10 × a read at the smallest working set",
                {
                    "vs memory": Predicate(
                        "min ≥ 0.8 × memory, max ≤ 2 × memory",
                        min(fr.values()) >= 0.8 * mem and max(fr.values()) <= 2 * mem,
                        f"{min(fr.values()):.3g} to {max(fr.values()):.3g} vs {mem:.3g} ns",
                    ),
                    "vs read": Predicate(
                        "≥ 10 × read", fr[xs[0]] >= 10 * rd[xs[0]], f"{fr[xs[0]]:.3g} vs {rd[xs[0]]:.3g} ns"
                    ),
                },
            ),
            "The clflush drops the line from every cache of the socket, so the load that follows misses to memory, "
            "after the flush's own round trip to the LLC.",
        ),
        Row(
            FIG,
            "B: clflush costs i > m > r at every N",
            None,
            text(
                "§2.2",
                "Manipulating invalidated cache-lines has the largest cost ... Due to cache write-backs, there is more "
                "overhead for cache-lines that are modified, than if they are only read",
            ),
            b["clflush i"][n_max] / b["clflush r"][n_max],
            all_of(
                "per-line clflush: i > m > r at every N",
                {
                    f"{n}": ordering({s: b[f"clflush {s}"][n] for s in ("i", "m", "r")}, f"{n} lines")
                    for n in sorted(b["clflush r"])
                },
            ),
            "A read line costs the LLC lookup; a modified one also its write-back to memory (30 ns to the memory's "
            "ack); a line the socket does not hold is broadcast to the socket's cores (40 ns; these runs have one "
            "core per socket, so the broadcast to its other 27 cores is that calibrated cost).",
        ),
        Row(
            FIG,
            "B: clflushopt+mfence per line falls with N and beats clflush for large N",
            None,
            text(
                "§2.2",
                "For a small numbers of flushes, the cost of this barrier dominates, but for larger numbers of "
                "flushes, its impact is marginalized",
            ),
            opt[n_max] / b["clflush r"][n_max],
            all_of(
                "clflushopt per line falls with N, and at the largest N < 0.5 × clflush",
                {
                    "falls": monotone(ns, [opt[n] for n in ns], increasing=False),
                    "vs clflush": Predicate(
                        "< 0.5 × clflush r",
                        opt[n_max] < 0.5 * b["clflush r"][n_max],
                        f"{opt[n_max]:.3g} vs {b['clflush r'][n_max]:.3g} ns",
                    ),
                },
            ),
            f"Up to {system.FILL_BUFFERS} clflushopts (the core's fill buffers) are in flight at once, so their "
            "round trips overlap; the one mfence waits for the last, which a long batch amortizes.",
        ),
    ]


MUTANTS = [
    Mutant(
        "no-capacity",
        "caches without capacity: every line a core touched stays in its L1",
        set={"protocol.bi.mutant": "no-capacity"},
        # the largest working set would fill the caches' maps with every line: the steps below it suffice
        when=lambda labels: labels.get("panel") == "A" and labels.get("x", 0) <= 8 * MIB,
        flips=["A: a load's cost rises in steps at the L1, L2 and L3 capacities"],
    ),
    Mutant(
        "flush-keeps-line",
        "clflush writes back but does not invalidate",
        set={"protocol.bi.mutant": "flush-keeps-line"},
        flips=["A: flush+read runs at memory speed at every working set"],
    ),
    Mutant(
        "no-flush-broadcast",
        "a flush of a line the socket does not hold completes at the LLC, without the broadcast",
        set={"protocol.bi.broadcast_on_miss": False},
        flips=["B: clflush costs i > m > r at every N"],
    ),
    Mutant(
        "clflushopt-serializing",
        "one clflushopt in flight at a time (one fill buffer: the core's other misses were one at a time already)",
        set={"protocol.bi.fill_buffers": 1},
        flips=["B: clflushopt+mfence per line falls with N and beats clflush for large N"],
    ),
]

CHOICES = [
    Choice(
        "the broadcast's cost (no public measurement for this CPU: ~100 cycles from flush_flush#13)",
        "40 ns",
        [Variant("20ns", "half the broadcast cost", set={"protocol.bi.broadcast": "20ns"})],
    ),
]

NOTES = f"""
Loads and flushes of one core of socket 0 on a two-socket machine (one per
enclosure; the operations stay in the socket). Panel A: {WS} B working
sets (--quick {WS_QUICK}), 20000 random loads (--quick 2000) after the
caches are left as one pass over the working set leaves them; "memory" is
a load of a line no cache holds. Panel B: each repetition leaves the N
lines read (loaded), modified (stored) or not cached (clflushed), then
measures the N operations and one mfence; lines are contiguous in socket
0's memory (the paper's are a random sequence: no set conflicts arise at
these sizes either way). Per-line cost = measured time / lines.

The core: the machine's (system.py), except that panel A's loads are made
one at a time, each after the previous one's data (one miss in flight,
where the machine's core has system.FILL_BUFFERS = {system.FILL_BUFFERS}): the
paper's per-line cost is "mainly a function of the level of cache in which
the load resolves", a latency, and flush+read's clflush is serialising
anyway. The read benchmark has no overlapped mode, so there is no
alternative to run (Fig 12's loader overlaps {system.FILL_BUFFERS}).

{system.__doc__}"""

EXPERIMENT = Experiment(
    seed="bi",
    figure="fig03",
    title="BI Fig 3: per-cache-line cost of loads and cache operations",
    sweep=sweep,
    analyze=analyze,
    plot=plot,
    compare=compare,
    notes=NOTES,
    mutants=MUTANTS,
    choices=CHOICES,
)
