"""BI Fig 12: load throughput under periodic cache invalidation, normalised to
no invalidation (noflush), against the working set; (A) the invalidation runs
on the loading core, (B) on another core of its socket (§7.1).

The paper: "aggressive cache invalidation performs the worst in all cases";
"when the working set fits into L2 cache, periodic cache invalidation at most
introduces 2% performance degradation"; "When the working set becomes 64MB,
load throughout decreases 20% and 10%, on the same and separate core,
respectively"; "in Figure 12B, a 100ms invalidation period has 2% throughput
degradation, while 10ms period has 10% degradation"; and the loss grows with
the working set and with the frequency.

How it is simulated (docs/design/bi.md §3.7 and §7, "slice 5 as built"):
one core of socket 0 loads lines of the working set at random; every period,
every line of the working set is invalidated (clflushopt each, then one
mfence) by that core (A) or by the socket's second core (B). Event-level
windows give (a) the steady time per load without invalidation, and, per
working set and period, (b) the loads right after an invalidation (the
refills) and (c) the invalidation's own time on the loading core (A). Once a
window's loader has made 5 loads per line since the invalidation, its refills
are over and it idles to the next invalidation; the composition counts that
idle time at the steady rate (a):

    loss = (flush time on the loading core [A only] + refills x Δmiss) / period
         = 1 - (loads in the window x t_steady + idle) / period.

The machine and the benchmark run at 1/8 scale: the caches, the working sets
and the periods are divided by 8 (per-access costs are not), which keeps the
two ratios the loss depends on (working set / cache, and lines to refill /
loads in a period) and makes 100 ms periods over 64 MB affordable. The test
suite checks the composition against full event-level runs and the scaling
against an unscaled run."""

from __future__ import annotations

import math

import pandas as pd

from ...sweeps import Sweep, build
from .. import Experiment
from ..plots import figure_legend, paper_point
from ..variants import Choice, Mutant, Variant
from ..verdicts import Predicate, Row, Tolerance, all_of, bound, text
from . import system

FIG = "BI Fig 12"
KIB, MIB = 1 << 10, 1 << 20
LINE = 64
#: the paper's working sets (up to 64 MB) and periods
WS = [32 * KIB, 256 * KIB, 1 * MIB, 8 * MIB, 32 * MIB, 64 * MIB]
WS_QUICK = [32 * KIB, 1 * MIB, 64 * MIB]
PERIODS_MS = [1, 10, 100]
#: the machine and benchmark at 1/SCALE: caches, working sets, periods
SCALE = 8
#: loads per line after an invalidation by which its refills are over (e^-5: 0.7% of lines untouched)
SETTLE = 5
#: the loader's load misses in flight: the machine's (system.FILL_BUFFERS: the skylake-sp preset's L1 fill
#: buffers, [protocol.bi] fill_buffers, which its clflushopts hold too). Not a benchmark key: the loads are
#: independent, so the core's fill buffers bound them
MLP = system.FILL_BUFFERS
#: an upper bound on an invalidation's time a line (a line the socket no longer holds: the round trip
#: and the broadcast, 10 or more in flight), to run enough unmeasured periods when it outlasts the period
FLUSH_NS_BOUND = 6
#: the paper's caches (bytes)
L1, L2, L3 = 32 * KIB, 1 * MIB, 1_375 * MIB * 28 // 1000
SOCKETS, CORES = 2, 2
#: the steady-rate window, and the aggressive one (simulated time)
STEADY_NS, AGGRESSIVE_NS = 1_000_000, 200_000
#: readings of the paper's text (Choices below): the 64 MB sentence holds at this period,
#: the 12B period sentence at this working set
READ_MS, READ_MS_ALT = 10, 100
READ_WS, READ_WS_ALT = 64 * MIB, 8 * MIB
#: "2%" (the L2 bound, the 100 ms period): stated to half a unit of its last digit, half a point
L2_PRECISION = 0.005
PANELS = {"A": "same", "B": "other"}


def _machine(scale: int) -> dict:
    return {"l1_size": f"{L1 // scale}B", "l2_size": f"{L2 // scale}B", "l3_size": f"{L3 // scale}B"}


def _bench(labels: dict, scale: int) -> dict:
    """The [protocol.bi.bench] of a point, at 1/scale."""
    ws = labels["x"] // scale
    series = labels["series"]
    b: dict = {"kind": "periodic", "working_set": f"{ws}B"}
    if series == "noflush":
        return {**b, "mode": "noflush", "period": f"{STEADY_NS}ns", "periods": 1}
    if series == "aggressive":
        # the regime: every line was invalidated after its last load, so no cache holds one
        return {**b, "mode": "aggressive", "period": f"{AGGRESSIVE_NS}ns", "periods": 1, "warm": False}
    p_ns = labels["period_ms"] * 1_000_000 // scale
    lines = ws // LINE
    # unmeasured periods bring the caches to the periodic state (and, when an invalidation outlasts the
    # period, the invalidations to back-to-back); a 100 ms period leaves the caches as full as the steady
    # state, so it is measured from the steady state directly
    skip = 0 if labels["period_ms"] >= 100 else 1 + math.ceil(lines * FLUSH_NS_BOUND / p_ns)
    return {
        **b,
        "mode": PANELS[labels["panel"]],
        "period": f"{p_ns}ns",
        "periods": skip + 1,
        "skip": skip,
        "settle": SETTLE * lines,
    }


def _scaled(labels: dict, scale: int) -> dict:
    """--set keys giving a point at 1/scale (a Choice)."""
    b = _bench(labels, scale)
    keys = {f"protocol.bi.bench.{k}": v for k, v in b.items() if k != "kind"}
    keys.update({f"protocol.bi.{k}": v for k, v in _machine(scale).items()})
    return keys


def _point(labels: dict):
    (p,) = build(
        system.superdome(sockets=SOCKETS, cores=CORES, bench=_bench(labels, SCALE), bi=_machine(SCALE), max_time="20s"),
        metrics=[],
        name="bi/fig12",
        extract="fabricsim.experiments.bi.fig12:metrics",
    ).points
    p.labels = labels
    return p


def metrics(result) -> dict:
    """A sweep ``extract``: the periodic benchmark's counters (ns)."""
    p = result.summary.get("protocol", {})

    def g(k: str) -> float:
        v = p.get(k)
        return float("nan") if v is None else float(v)

    return {
        "outcome": result.summary["outcome"],
        "done": g("bench_done"),
        "ops": g("bench_ops"),
        "ns_per_op": g("bench_ns_per_op"),
        "measured_ns": g("bench_measured_ns"),
        "idle_ns": g("bench_idle_ns"),
        "flush_ns": g("bench_flush_ns"),
        "flushes": g("bench_flushes"),
    }


def sweep(quick: bool) -> Sweep:
    pts = []
    for ws in WS_QUICK if quick else WS:
        pts.append(_point({"panel": "-", "series": "noflush", "x": ws, "period_ms": 0}))
        pts.append(_point({"panel": "-", "series": "aggressive", "x": ws, "period_ms": 0}))
        for pm in PERIODS_MS:
            for panel in PANELS:
                pts.append(_point({"panel": panel, "series": f"{pm} ms", "x": ws, "period_ms": pm}))
    return Sweep("bi/fig12", pts)


def compose(steady_ns: float, ops: float, idle_ns: float, measured_ns: float) -> float:
    """Normalised throughput of a periodic window: its loads, plus its idle time (refills over) at the
    steady rate, against the loads the steady rate makes in the window."""
    return (ops * steady_ns + idle_ns) / measured_ns


def analyze(df: pd.DataFrame) -> pd.DataFrame:
    d = df.copy()
    steady = dict(zip(d.loc[d["series"] == "noflush", "x"], d.loc[d["series"] == "noflush", "ns_per_op"]))
    d["steady_ns"] = d["x"].map(steady)
    norm = []
    for r in d.itertuples():
        if r.series == "noflush":
            norm.append(1.0)
        elif r.series == "aggressive":
            norm.append(r.steady_ns / r.ns_per_op)
        else:
            norm.append(compose(r.steady_ns, r.ops, r.idle_ns, r.measured_ns))
    d["norm"] = norm
    d["loss"] = 1 - d["norm"]
    # the invalidation's share of the period on the loading core (A); the rest is refills
    d["flush_share"] = [f / m if p == "A" else 0.0 for f, m, p in zip(d["flush_ns"], d["measured_ns"], d["panel"])]
    d["refill_share"] = d["loss"] - d["flush_share"]
    # the readings of the paper's text (the Choices switch these columns)
    d["read_ms"], d["read_ms_alt"] = READ_MS, READ_MS_ALT
    d["read_ws"], d["read_ws_alt"] = READ_WS, READ_WS_ALT
    d = d.sort_values(["panel", "period_ms", "series", "x"])
    cols = ["panel", "series", "period_ms", "x", "norm", "loss", "flush_share", "refill_share", "steady_ns"]
    cols += ["ns_per_op", "ops", "idle_ns", "flush_ns", "measured_ns", "outcome", "done"]
    cols += ["read_ms", "read_ms_alt", "read_ws", "read_ws_alt"]
    return d[cols].reset_index(drop=True)


def loss(data: pd.DataFrame, panel: str, period_ms: int) -> dict:
    """Loss by working set of one panel's periodic series (aggressive: ``period_ms`` 0, both panels)."""
    if period_ms == 0:
        d = data[data["series"] == "aggressive"]
    else:
        d = data[(data["panel"] == panel) & (data["period_ms"] == period_ms)]
    return dict(zip(d["x"], d["loss"]))


def _size(x: int) -> str:
    return f"{x // MIB} MB" if x >= MIB else f"{x // KIB} KB"


def plot(data: pd.DataFrame, fig) -> None:
    axes = fig.subplots(1, 2, sharey=True)
    for ax, panel in zip(axes, PANELS):
        for pm in [*PERIODS_MS, 0]:
            s = loss(data, panel, pm)
            xs = sorted(s)
            ax.plot(
                [x / KIB for x in xs],
                [1 - s[x] for x in xs],
                marker="o",
                label="aggressive" if pm == 0 else f"{pm} ms",
            )
        ax.axhline(1.0, color="grey", linewidth=0.8, label="noflush")
        read = int(data["read_ms"].iloc[0])
        paper_point(ax, 64 * MIB / KIB, 0.8 if panel == "A" else 0.9, "text", label=f"paper 64 MB (read at {read} ms)")
        if panel == "B":
            paper_point(ax, 64 * MIB / KIB, 0.98, "text", label="paper 12B 100 ms", marker="s")
        ax.set_xscale("log")
        ax.set_xlabel("working set (KiB)")
        ax.set_title(f"({panel}) invalidation on {'the same' if panel == 'A' else 'another'} core")
        ax.grid(True, alpha=0.3)
    axes[0].set_ylabel("load throughput / noflush")
    figure_legend(fig)
    fig.suptitle("BI Fig 12: load throughput under periodic cache invalidation")


def _at(data: pd.DataFrame, panel: str, pm: int, x: int) -> float:
    return loss(data, panel, pm).get(x, float("nan"))


def compare(data: pd.DataFrame) -> list[Row]:
    xs = sorted(loss(data, "A", PERIODS_MS[0]))
    read_ms = int(data["read_ms"].iloc[0])
    read_ws = int(data["read_ws"].iloc[0])
    big = max(xs)
    # aggressive below every periodic series, at every working set, in both panels
    worst = {}
    for panel in PANELS:
        aggr = loss(data, panel, 0)
        for pm in PERIODS_MS:
            s = loss(data, panel, pm)
            bad = [_size(x) for x in xs if not aggr[x] > s[x]]
            worst[f"{panel} {pm} ms"] = Predicate(
                "aggressive loses more", not bad, "worse at " + ", ".join(bad) if bad else "everywhere"
            )
    in_l2 = [x for x in xs if x <= L2]
    l2_losses = {(p, pm, x): _at(data, p, pm, x) for p in PANELS for pm in PERIODS_MS for x in in_l2}
    l2_max = max(l2_losses.values())
    l2_arg = max(l2_losses, key=l2_losses.get)
    grows = {}
    for panel in PANELS:
        for pm in PERIODS_MS:
            s = loss(data, panel, pm)
            ys = [s[x] for x in xs]
            ok = all(b >= a - 0.005 for a, b in zip(ys, ys[1:])) and ys[-1] > ys[0]
            grows[f"{panel} {pm} ms vs working set"] = Predicate(
                "rises", ok, ", ".join(f"{_size(x)} {y:.1%}" for x, y in zip(xs, ys))
            )
        for x in xs:
            ys = [_at(data, panel, pm, x) for pm in PERIODS_MS]
            # "more frequent invalidation has more overhead": the shortest period loses strictly more than the
            # longest, and no step against it of more than half a point
            ok = all(a >= b - 0.005 for a, b in zip(ys, ys[1:])) and ys[0] > ys[-1]
            grows[f"{panel} {_size(x)} vs period"] = Predicate(
                "falls with the period", ok, ", ".join(f"{pm} ms {y:.1%}" for pm, y in zip(PERIODS_MS, ys))
            )
    a64, b64 = _at(data, "A", read_ms, big), _at(data, "B", read_ms, big)
    b100, b10 = _at(data, "B", 100, read_ws), _at(data, "B", 10, read_ws)
    share = _share(data, "A", read_ms, big)
    # with the default readings both 12B sentences name the same point (64 MB at 10 ms): one datum, one row
    same_point = (read_ms, big) == (10, read_ws)
    rows = [
        Row(
            FIG,
            "aggressive invalidation is the worst in all cases",
            None,
            text("§7.1", "Those results show aggressive cache invalidation performs the worst in all cases."),
            None,
            all_of("aggressive's loss above every periodic series at every working set, both panels", worst),
            "Aggressive invalidates each line right after its load, so every load misses to memory and pays a "
            "clflushopt and an mfence; a periodic invalidation batches the flushes and leaves the refilled lines "
            "cached for the rest of the period.",
            if_disagrees="The invalidation flushes the whole working set each period (the 'accessed' policy of a "
            "uniform loop over it); past a few MB that takes longer than a 1 ms period (≈ 5 ns a line for lines the "
            f"socket no longer holds: the broadcast, {system.FILL_BUFFERS} in flight), so on the same core the "
            "loader never runs, which is worse than aggressive. Flushing only the lines loaded since the last "
            "invalidation would cost at most one flush a load.",
        ),
        Row(
            FIG,
            "loss ≤ 2% while the working set fits in L2 (≤ 1 MB), every period",
            0.02,
            bound(
                "§7.1",
                "when the working set fits into L2 cache, periodic cache invalidation at most introduces 2% "
                "performance degradation",
            ),
            l2_max,
            Predicate(
                f"largest loss at ≤ 1 MB, both panels, every period ≤ 2% (+ {L2_PRECISION:.1%}, the stated "
                "precision of '2%')",
                l2_max <= 0.02 + L2_PRECISION,
                f"max {l2_max:.1%} at {l2_arg[0]} {l2_arg[1]} ms {_size(l2_arg[2])}; "
                + ", ".join(f"{p} {pm} ms {_size(x)} {v:.1%}" for (p, pm, x), v in l2_losses.items()),
            ),
            f"After an invalidation each line of the working set is refilled from memory once ({MLP} misses in "
            "flight); on the same core the loader also flushes each line (≈ 2 ns a line for lines it holds). A 1 MB "
            "set is 16384 lines.",
            if_disagrees="At 1 ms on the same core a 1 MB set's flushes take ≈ 3% of the period and its refills "
            "≈ 2% more; the detail shows the loss is within 2% at 10 and 100 ms and on the other core.",
        ),
        Row(
            FIG,
            "64 MB, invalidation on the same core (12A)",
            0.20,
            text(
                "§7.1",
                "When the working set becomes 64MB, load throughout decreases 20% and 10%, on the same and separate "
                "core, respectively.",
            ),
            a64,
            Tolerance(),
            f"Read at {read_ms} ms (the paper gives no period). The loading core spends {share:.0%} of each "
            "period flushing the 1 M lines of the working set (≈ 3.6 ns a line, most of them no longer in the "
            "socket: the broadcast), and then refills from memory the lines that the L3 would otherwise hold.",
            if_disagrees="The flushes alone take more than the paper's whole 20%: a line the socket no longer holds "
            f"costs the flush round trip and the broadcast (≈ 56 ns, {system.FILL_BUFFERS} in flight). Read at 100 "
            "ms (a Choice) the loss is ≈ 5%.",
        ),
        Row(
            FIG,
            "64 MB, invalidation on another core (12B)",
            0.10,
            text(
                "§7.1",
                "When the working set becomes 64MB, load throughout decreases 20% and 10%, on the same and separate "
                "core, respectively.",
            ),
            b64,
            Tolerance(),
            f"Read at {read_ms} ms (the paper gives no period). The other core's flushes invalidate the "
            "loader's copies and the socket's L3 copies (a flush acts on every cache of the socket), so the "
            "loader refills from memory; the flushes' own time is not the loader's."
            + (
                " The same point is the 12B period sentence's '10ms period has 10% degradation' (read at 64 MB): "
                "one datum, so one row."
                if same_point
                else ""
            ),
        ),
        Row(
            FIG,
            "12B: 100 ms period",
            0.02,
            text(
                "§7.1",
                "in Figure 12B, a 100ms invalidation period has 2% throughput degradation, while 10ms period has "
                "10% degradation",
                # "2%": as the paper writes it, half a unit of its digit, 0.5 points (from the fraction 0.02
                # the policy's default would be 0.001, 5 % of the value)
                precision=L2_PRECISION,
            ),
            b100,
            Tolerance(),
            f"Read at {_size(read_ws)} (the paper gives no working set). The refills after each invalidation are "
            "the same work whatever the period; a longer period spreads them over more loads.",
            if_disagrees=f"With {MLP} misses in flight the loader refills the L3's share of 64 MB in well under a "
            "tenth of 100 ms; a 2% loss needs slower refills, such as a memory slowed by the flusher's traffic, "
            "which the model does not have (no memory bandwidth limit on reads).",
        ),
    ]
    if not same_point:
        rows.append(
            Row(
                FIG,
                "12B: 10 ms period",
                0.10,
                text(
                    "§7.1",
                    "in Figure 12B, a 100ms invalidation period has 2% throughput degradation, while 10ms period has "
                    "10% degradation",
                ),
                b10,
                Tolerance(),
                f"Read at {_size(read_ws)} (the paper gives no working set). At 10 ms the loader cannot refill a large "
                "working set before the next invalidation, so most of its loads miss to memory.",
            )
        )
    rows += [
        Row(
            FIG,
            GROWS,
            None,
            text(
                "§7.1",
                "With a larger working set, cache invalidation has more impact as expected, due to the increased "
                "cache miss overhead ... more frequent cache invalidation has more overhead as well",
            ),
            None,
            all_of("loss rises with the working set and falls with the period (steps against ≤ 0.5 point)", grows),
            "More lines to refill and to flush per invalidation, and more invalidations per second.",
            if_disagrees="Where a period is too short to refill the working set (1 ms, tens of MB), nearly every "
            "load after an invalidation misses either way, and a larger set's slower steady rate (more L3 misses "
            "without invalidation) makes the same misses a smaller relative loss: the loss stops growing.",
        ),
    ]
    return rows


def _share(data: pd.DataFrame, panel: str, pm: int, x: int) -> float:
    d = data[(data["panel"] == panel) & (data["period_ms"] == pm) & (data["x"] == x)]
    v = float(d["flush_share"].iloc[0]) if len(d) else float("nan")
    return v if math.isfinite(v) else 0.0


def _periodic(labels) -> bool:
    return labels.get("period_ms", 0) > 0


def _every_ms(labels) -> dict:
    """period-ignored: a periodic point's bench keys as if its period were 1 ms."""
    if not _periodic(labels):
        return {}
    b = _bench({**labels, "period_ms": 1}, SCALE)
    return {f"protocol.bi.bench.{k}": b[k] for k in ("period", "periods", "skip")}


#: the row the mutants break. They also turn the 64 MB 12B row to disagrees, but with the preset's 12 fill
#: buffers that row already disagrees (it agrees with 10, the declared alternative of the MLP Choice), so
#: the row they are checked on is the one every verdict of the figure rests on
GROWS = "loss grows with the working set and with the frequency"

MUTANTS = [
    Mutant(
        "clflush-instead-of-clflushopt",
        "the periodic invalidation uses clflush (serialising, one line at a time) instead of clflushopt",
        set={"protocol.bi.bench.op": "clflush"},
        when=_periodic,
        # clflush cannot get through the working set within a period: the invalidations become one slow
        # sweep, which in 12B leaves most of the loader's lines alone, and the loss stops following the period
        flips=[GROWS],
    ),
    Mutant(
        "flush-core-local",
        "a flush invalidates only the issuing core's private caches (not the socket's other cores or its L3)",
        set={"protocol.bi.mutant": "flush-core-local"},
        # 12B loses nothing at any working set or period: the other core's flushes no longer reach the loader
        flips=[GROWS],
    ),
    Mutant(
        "period-ignored",
        "the invalidation runs every 1 ms whatever the period asked",
        set_per_point=lambda labels: _every_ms(labels),
        # every period loses as 1 ms does
        flips=[GROWS],
    ),
]


def _settle(labels, settle: int) -> dict:
    """The settle Choice: a periodic point's refills counted over ``settle`` loads a line."""
    if not _periodic(labels):
        return {}
    return {"protocol.bi.bench.settle": settle * (labels["x"] // SCALE // LINE)}


CHOICES = [
    Choice(
        "the measurement window of a periodic point: simulated until the loader has made this many loads a line "
        "since the invalidation, then idle at the steady rate",
        f"{SETTLE} loads a line (e^-{SETTLE}: {math.exp(-SETTLE):.1%} of the lines not yet touched)",
        [
            Variant(
                f"{2 * SETTLE} loads a line",
                f"{2 * SETTLE} loads a line simulated before the idle (e^-{2 * SETTLE} untouched)",
                set_per_point=lambda labels: _settle(labels, 2 * SETTLE),
            )
        ],
    ),
    Choice(
        "the loader's load misses in flight (an out-of-order core's fill buffers)",
        f"{MLP}: the machine's (system.FILL_BUFFERS, the skylake-sp preset's fill buffers)",
        [
            Variant(
                "in order",
                "one load miss at a time (a loader whose loads depend on each other)",
                set={"protocol.bi.bench.dependent": True},
            ),
            # the count is disputed (docs/cpu-presets.md): the other sources' value, for the load misses
            # and the flushes alike, as both are the fill buffers
            Variant(
                f"{system.FILL_BUFFERS_ALT} fill buffers",
                f"{system.FILL_BUFFERS_ALT} load misses and {system.FILL_BUFFERS_ALT} clflushopts in flight "
                "(the fill-buffer count stated for the cores before Skylake)",
                set={"protocol.bi.fill_buffers": system.FILL_BUFFERS_ALT},
            ),
        ],
    ),
    Choice(
        "the machine and the benchmark at 1/8 scale (caches, working sets, periods)",
        "1/8",
        [
            # smaller, not larger: the alternative re-runs at --quick sizes in every full reproduction
            Variant(
                "1/16 scale",
                "caches, working sets and periods at 1/16 instead of 1/8",
                set_per_point=lambda labels: _scaled(labels, 16),
            )
        ],
    ),
    Choice(
        "the period at which the 64 MB sentence holds (the paper does not say)",
        f"{READ_MS} ms (where its 12B 10% meets the 10 ms sentence's)",
        [Variant(f"{READ_MS_ALT} ms", "read the 64 MB numbers at 100 ms", columns={"read_ms": "read_ms_alt"})],
    ),
    Choice(
        "the working set at which the 12B period sentence holds (the paper does not say)",
        "64 MB",
        # (an alternative the --quick sweep has: the robustness table re-runs choices at --quick sizes)
        [Variant("8 MB", "read the 12B period numbers at 8 MB", columns={"read_ws": "read_ws_alt"})],
    ),
]

NOTES = f"""
One core of socket 0 (of a two-socket machine, two cores a socket) loads
lines of the working set at random. Every period the working set's lines
are invalidated (clflushopt each, then one mfence): by that core (12A) or by
the socket's second core (12B). "aggressive": each line is invalidated
right after its load by the loading core (clflushopt, mfence): we read the
paper's "invalidated immediately once it is assessed" as "once it is
accessed"; only the loading core knows when that is, so the same series is
drawn in both panels. Working sets {[_size(x) for x in WS]} (--quick
{[_size(x) for x in WS_QUICK]}), periods {PERIODS_MS} ms.

The invalidation set is the whole working set ("accessed" lines, §4.2
policy 2, read as every line a uniform loop over the working set touches).
At 1/{SCALE} scale (caches {_size(L1 // SCALE)}, {_size(L2 // SCALE)},
{L3 // SCALE} B; working sets and periods /{SCALE}). Windows: the steady
rate over {STEADY_NS // 1000} µs from warm caches; each periodic point runs
unmeasured periods until its invalidations reach their periodic state (back
to back when one outlasts the period), then measures one (100 ms: one, from
the steady state); the loader has {MLP} load misses in flight; after
{SETTLE} loads a line since the invalidation the loader idles to the next,
counted at the steady rate. Readings of the text: the 64 MB sentence
at {READ_MS} ms, the 12B period sentence at {_size(READ_WS)} (Choices).

{system.__doc__}"""

EXPERIMENT = Experiment(
    seed="bi",
    figure="fig12",
    title="BI Fig 12: load throughput under periodic cache invalidation",
    sweep=sweep,
    analyze=analyze,
    plot=plot,
    compare=compare,
    notes=NOTES,
    mutants=MUTANTS,
    choices=CHOICES,
)
