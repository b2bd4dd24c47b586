"""BI Fig 13: PageRank on the Twitter graph against the number of sockets,
stock PowerGraph (MPI over coherent memory) vs BI-on-demand and BI-periodic
(§7.3).

The paper: "on two sockets, BI-on-demand and BI-periodic is 11% and 6%
slower respectively"; "With eight sockets, BI-on-demand and BI-periodic
runs 32% and 21% faster respectively"; "On average, BI-on-demand runs 5%
faster than BI-periodic". A speed-up here is T_stock / T_BI, so "11%
slower" is 1/1.11 = 0.90 and "32% faster" 1.32 (docs/design/bi.md §2).

How it is computed (:mod:`.gas_model`): event-level runs of the BI machine
measure a load from local, same-enclosure and other-enclosure memory and a
pipelined clflushopt of a line the socket does not hold; an R-MAT graph
(Twitter's average degree), PowerGraph's random vertex cut and PageRank to
convergence give the per-socket counts, scaled to Twitter's size; the count
model composes them per iteration. PowerGraph's software costs are
parameters with low confidence, and the report re-runs the figure with
other values."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pandas as pd

from ...sweeps import Sweep, build
from .. import Experiment
from ..plots import figure_legend
from ..variants import Choice, Mutant, Variant
from ..verdicts import MODEL, Predicate, Row, Tolerance, all_of, greater, monotone, text
from . import gas_model as gm
from . import system

FIG = "BI Fig 13"
SOCKETS = [2, 4, 6, 8]
SCALE, SCALE_QUICK = 18, 15
#: a load of each memory from socket 0's core on the 8-socket machine: 0 local, 1 same enclosure, 4 the other
HOMES = {"local": 0, "same": 1, "cross": 4}
FLUSH_LINES = 4096
#: coherent mode: a load of a line another socket's core has modified, the writer in the same enclosure or not
DIRTY = {"coherent_same": 1, "coherent_cross": 4}
DIRTY_LINES = 16
#: alternative software costs the report re-runs (Choices) and the broken ones the tests run (mutants)
MODELS = {
    "": gm.Software(),
    "mlp2": gm.Software(mlp=2.0),
    # the machine's misses in flight (system.FILL_BUFFERS), the value Fig 12's loader runs
    f"mlp{system.FILL_BUFFERS}": gm.Software(mlp=float(system.FILL_BUFFERS)),
    "record75": gm.Software(record=75.0),
    "record300": gm.Software(record=300.0),
    "edge10": gm.Software(edge=10.0),
    "relevant": gm.Software(periodic_flush="relevant"),
    "mpi_free": gm.Software(record=0.0),
    "no_staleness": gm.Software(staleness=False),
}


def _point(bench: dict, labels: dict):
    (p,) = build(
        system.superdome(sockets=8, bench=bench),
        metrics=[],
        name="bi/fig13",
        extract="fabricsim.experiments.bi.system:bench_metrics",
    ).points
    p.labels = labels
    return p


def dirty_hit_trace(writer: int, lines: int = DIRTY_LINES) -> Path:
    """A trace in fabricsim's cache: socket ``writer``'s core stores each of ``lines`` lines of socket 0's
    memory, and 1 µs later socket 0's core loads it (2 µs apart: every load is unloaded)."""
    text = "".join(
        f"{2000 * i}ns c{writer}.0 W {hex(64 * i)} 64\n{2000 * i + 1000}ns c0.0 R {hex(64 * i)} 64\n"
        for i in range(lines)
    )
    root = Path(os.environ.get("FABRICSIM_CACHE", Path.home() / ".cache" / "fabricsim"))
    path = root / "traces" / f"bi-dirty-hit-{hashlib.sha256(text.encode()).hexdigest()[:16]}.trace"
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp")
        tmp.write_text(text)
        os.replace(tmp, path)
    return path


def read_metrics(result) -> dict:
    """A sweep ``extract``: the mean load time (ns) of a traced run."""
    s = result.summary
    return {"outcome": s["outcome"], "ns_per_op": s["read_latency_ns"]["mean"]}


def sweep(quick: bool) -> Sweep:
    scale = SCALE_QUICK if quick else SCALE
    pts = []
    for name, home in HOMES.items():
        cold = {"kind": "read", "working_set": "256MiB", "ops": 200, "warm": False, "sequential": True, "home": home}
        pts.append(_point(cold, {"cost": name, "scale": scale}))
    flush = {"kind": "flush", "op": "clflushopt", "state": "i", "lines": FLUSH_LINES, "reps": 2}
    pts.append(_point(flush, {"cost": "flush", "scale": scale}))
    for name, writer in DIRTY.items():
        trace = {"pattern": "trace", "trace": str(dirty_hit_trace(writer)), "line": "64B", "footprint": "8GiB"}
        (p,) = build(
            system.superdome(sockets=8, bi={"coherent": True}, workload=trace),
            metrics=[],
            name="bi/fig13",
            extract="fabricsim.experiments.bi.fig13:read_metrics",
        ).points
        p.labels = {"cost": name, "scale": scale}
        pts.append(p)
    return Sweep("bi/fig13", pts)


def machine(df: pd.DataFrame) -> gm.Machine:
    c = dict(zip(df["cost"], df["ns_per_op"]))
    return gm.Machine(
        local=c["local"],
        same=c["same"],
        cross=c["cross"],
        flush=c["flush"],
        coherent_same=c["coherent_same"],
        coherent_cross=c["coherent_cross"],
    )


def analyze(df: pd.DataFrame) -> pd.DataFrame:
    m = machine(df)
    scale = int(df["scale"].iloc[0])
    out = None
    for tag, sw in MODELS.items():
        d = pd.DataFrame(gm.runtimes(scale, SOCKETS, m, sw)).set_index(["sockets", "variant"])
        if tag:
            d = d[["runtime_s"]].rename(columns={"runtime_s": f"runtime_s@{tag}"})
        out = d if out is None else out.join(d)
    out = out.reset_index()
    for col in [c for c in out.columns if c.startswith("runtime_s")]:
        stock = out[out["variant"] == "stock"].set_index("sockets")[col]
        out[col.replace("runtime_s", "speedup")] = [stock[p] / t for p, t in zip(out["sockets"], out[col])]
    for k, v in dict(zip(df["cost"], df["ns_per_op"])).items():
        out[f"{k}_ns"] = v
    out["scale"] = scale
    return out


def _speedup(data: pd.DataFrame, variant: str) -> dict:
    d = data[data["variant"] == variant]
    return dict(zip(d["sockets"], d["speedup"]))


def plot(data: pd.DataFrame, fig) -> None:
    ax = fig.subplots(1, 1)
    for v in gm.VARIANTS:
        d = data[data["variant"] == v].sort_values("sockets")
        ax.plot(d["sockets"], d["runtime_s"], marker="o", label=v)
    ax.set_xlabel("sockets")
    ax.set_ylabel("PageRank run time (s, Twitter-sized)")
    ax.grid(True, alpha=0.3)
    figure_legend(fig)
    fig.suptitle("BI Fig 13: PageRank vs sockets")


def _share(data: pd.DataFrame) -> dict:
    d = data[data["variant"] == "stock"]
    return dict(zip(d["sockets"], d["exchange_ms"] / d["iteration_ms"]))


#: every row's value comes from the count model, not from one simulation
COUNT_MODEL = (
    "PageRank on sockets as a count model (gas_model.py) over a simulated graph (R-MAT, PowerGraph's random vertex "
    "cut, PageRank to convergence), the machine's measured costs (event-level loads and flushes) and PowerGraph's "
    "software costs (parameters); the L3's miss share by Che's approximation"
)


def _row(*args, **kw) -> Row:
    return Row(FIG, *args, basis=MODEL, model=COUNT_MODEL, **kw)


def compare(data: pd.DataFrame) -> list[Row]:
    od, pe = _speedup(data, "bi-on-demand"), _speedup(data, "bi-periodic")
    lo, hi = min(SOCKETS), max(SOCKETS)
    share = _share(data)
    at_hi = data[data["sockets"] == hi].set_index("variant")
    exchange = float(at_hi.loc["stock", "exchange_ms"])
    inval = {v: float(at_hi.loc[v, "flush_ms"]) for v in ("bi-on-demand", "bi-periodic")}
    ratio = sum(od[p] / pe[p] for p in SOCKETS) / len(SOCKETS)
    # "11% slower" is a speed-up of 1/1.11, stated to half a point of the slow-down: ±(1/1.105 - 1/1.115)/2
    src2 = text(
        "§7.3",
        "on two sockets, BI-on-demand and BI-periodic is 11% and 6% slower respectively",
        precision=_slower_precision(0.11),
    )
    src2p = text(
        "§7.3",
        "on two sockets, BI-on-demand and BI-periodic is 11% and 6% slower respectively",
        precision=_slower_precision(0.06),
    )
    src8 = text("§7.3", "With eight sockets, BI-on-demandand BI-periodic runs 32% and 21% faster respectively.")

    def cross(s: dict, name: str) -> Predicate:
        return all_of(
            f"{name}: slower than stock at {lo} sockets, faster at {hi}",
            {
                f"{lo}": Predicate(f"< 1 at {lo}", s[lo] < 1, f"{s[lo]:.3g}"),
                f"{hi}": Predicate(f"> 1 at {hi}", s[hi] > 1, f"{s[hi]:.3g}"),
            },
        )

    parts = (
        "Per iteration (slowest socket): stock gathers from local replicas and exchanges 2 records per "
        "mirror (serialised, deserialised); BI reads masters' data remotely (7/8 of the gather's reads at 8 "
        "sockets) and one core per socket invalidates the modified lines."
    )
    return [
        _row(
            "2 sockets: BI-on-demand speed-up over stock",
            1 / 1.11,
            src2,
            od[lo],
            Tolerance(),
            parts,
            "At 2 sockets stock exchanges few records (replication 1.8) while every BI gather read that misses "
            "the cache goes to the other enclosure (400 ns vs 90 ns local), so BI loses more than the paper's "
            "11 %; how much depends on the overlapped misses (Choice) more than on anything BI does.",
        ),
        _row(
            "2 sockets: BI-periodic speed-up over stock",
            1 / 1.06,
            src2p,
            pe[lo],
            Tolerance(),
            parts + " BI-periodic's flusher runs beside the gather instead of at the barriers.",
            "As for BI-on-demand: the remote gather reads; the flusher's work is hidden at 2 sockets.",
        ),
        _row(
            "8 sockets: BI-on-demand speed-up over stock",
            1.32,
            src8,
            od[hi],
            Tolerance(),
            parts,
            "Stock's exchange (about 2/3 of its iteration at 8 sockets) is what BI saves; BI pays its remote "
            "gather reads (most of the vertex reads miss the L3, and 7/8 of them go to another socket) and the "
            "invalidation of the mirrored lines on one core per socket, which leaves BI about even with stock. "
            "PowerGraph's per-record cost and its misses in flight are not published (Choices).",
        ),
        _row(
            "8 sockets: BI-periodic speed-up over stock",
            1.21,
            src8,
            pe[hi],
            Tolerance(),
            parts + " BI-periodic's reader_engine invalidates every writer's modified log (Fig 8).",
            "reader_engine invalidates every BI-managed object modified anywhere (each vertex's data and every "
            "replica's gather field: V × (1 + replication) lines an iteration), on one core per socket: at 8 "
            "sockets that flusher, not the gather, sets the iteration time. Flushing only the lines the socket "
            "reads (Choice 'relevant') makes BI-periodic the fastest variant instead.",
        ),
        _row(
            "BI-on-demand's speed-up over stock rises with sockets",
            None,
            text(
                "§7.3",
                "This is because PowerGraph incurs less message passing overhead on fewer sockets, while BI pays "
                "the cost of its cache quiescence. When the socket count grows, as expected, PowerGraph degrades",
            ),
            od[hi] / od[lo],
            monotone(SOCKETS, [od[p] for p in SOCKETS]),
            "Stock's records grow with the replication factor (1.8 → 5 from 2 to 8 sockets) while each socket's "
            "edges shrink as 1/P; BI's invalidation grows with the mirrors too, but a line costs one pipelined "
            "clflushopt (≈ 6 ns) against a record's serialisation and lookup.",
        ),
        _row(
            "BI-on-demand: slower than stock at 2 sockets, faster at 8",
            None,
            text(
                "§7.3",
                "With a small number of sockets, BI variants run slightly slower than the original PowerGraph ... "
                "When the socket count grows ... both BI implementations become faster than the original version",
            ),
            od[hi] / od[lo],
            cross(od, "BI-on-demand"),
            "As above: BI-on-demand gains on stock with every socket added.",
            "It gains but does not pass stock by 8 sockets: 72 % of the gather's vertex reads miss an LRU L3 "
            "(Che's approximation, checked against the event-level caches), and under BI 7/8 of those go to "
            "another socket's memory, half of them across the enclosures (400 ns). With the core's "
            f"{system.FILL_BUFFERS} misses in flight instead of 4 (Choice) the crossover comes between 2 and 4 "
            "sockets.",
        ),
        _row(
            "BI-periodic: slower than stock at 2 sockets, faster at 8",
            None,
            text(
                "§7.3",
                "With a small number of sockets, BI variants run slightly slower than the original PowerGraph ... "
                "When the socket count grows ... both BI implementations become faster than the original version",
            ),
            pe[hi] / pe[lo],
            cross(pe, "BI-periodic"),
            "As above, with BI-periodic's flush set.",
            "Invalidating every writer's log on one core per socket grows with V × replication and overtakes the "
            "gather from 4 sockets on (see the 8-socket row).",
        ),
        _row(
            "stock's communication share grows with sockets",
            None,
            text("§7.3", "PowerGraph degrades due to the high communication overhead among instances"),
            share[hi],
            monotone(SOCKETS, [share[p] for p in SOCKETS]),
            "Records per socket grow with the replication factor while the socket's edges fall as 1/P.",
        ),
        _row(
            f"{hi} sockets: BI's batched invalidation costs much less than stock's message passing",
            None,
            text(
                "§7.3",
                "This confirms that the batched cache invalidation made by BI has much less cost than message passing",
            ),
            max(inval.values()) / exchange,
            all_of(
                f"at {hi} sockets each BI variant's invalidation per iteration < stock's exchange / 2 ('much less': "
                "under half, the magnitude rule's factor)",
                {
                    v: greater(exchange, inval[v], "stock's exchange", f"{v}'s invalidation (ms)", factor=2)
                    for v in ("bi-on-demand", "bi-periodic")
                },
            ),
            "Stock serialises and deserialises two records a mirror; BI invalidates the modified lines with "
            "pipelined clflushopts on one core per socket (on-demand: the lines the socket reads, at the barriers; "
            "periodic: every writer's log, beside the gather). fabricsim's value: the larger invalidation over "
            "stock's exchange.",
            f"BI-on-demand invalidates for {inval['bi-on-demand']:.0f} ms an iteration against stock's "
            f"{exchange:.0f} ms of exchange ({inval['bi-on-demand'] / exchange:.0%}): each socket's mirrors and "
            "masters' lines, about 6 ns a line on one core. BI-periodic's reader_engine invalidates every BI-managed "
            "object modified machine-wide (V × (1 + replication) lines an iteration) on one core per socket: "
            f"{inval['bi-periodic']:.0f} ms (see the 8-socket BI-periodic row).",
        ),
        _row(
            "on average BI-on-demand is faster than BI-periodic",
            1.05,
            text("§7.3", "On average, BI-on-demand runs 5% faster than BI-periodic"),
            ratio,
            Tolerance(),
            "Mean over socket counts of T_periodic / T_on-demand. The model has the paper's two reasons: "
            "on-demand invalidates only the lines each socket reads, periodic every writer's log; periodic's "
            "stale reads can cost PageRank iterations.",
            "A 1 ms period against gather phases of hundreds of ms leaves well under 1 % of remote reads stale "
            "(the iteration count does not move), and the flush set, not staleness, decides: BI-periodic is "
            "far slower with every log flushed, faster with the relevant lines only.",
        ),
    ]


def _slower_precision(slower: float) -> float:
    """The stated precision of "N% slower" (N to half a point) as a speed-up T_stock / T_BI = 1 / (1 + N)."""
    return (1 / (1 + slower - 0.005) - 1 / (1 + slower + 0.005)) / 2


def _columns(tag: str) -> dict:
    return {"runtime_s": f"runtime_s@{tag}", "speedup": f"speedup@{tag}"}


MUTANTS = [
    Mutant(
        "quiescence-unbatched",
        "the invalidation is a serialising clflush per line instead of pipelined clflushopts and one fence",
        set={"protocol.bi.bench.op": "clflush"},
        when=lambda labels: labels.get("cost") == "flush",
        flips=["BI-on-demand's speed-up over stock rises with sockets"],
    ),
    Mutant(
        "mpi-free",
        "stock's messages cost nothing to serialise and deserialise (only their bytes move)",
        columns=_columns("mpi_free"),
        flips=["BI-on-demand's speed-up over stock rises with sockets"],
    ),
]

CHOICES = [
    Choice(
        "cache misses a core overlaps in the gather loop (no measurement of PowerGraph's; confidence low)",
        "4",
        [
            Variant("mlp2", "2 misses in flight", columns=_columns("mlp2")),
            Variant(
                f"mlp{system.FILL_BUFFERS}",
                f"{system.FILL_BUFFERS} misses in flight: the machine's fill buffers (system.FILL_BUFFERS, the "
                "skylake-sp preset's), the seed's common value, which Fig 12's loader runs",
                columns=_columns(f"mlp{system.FILL_BUFFERS}"),
            ),
        ],
    ),
    Choice(
        "PowerGraph's cost per exchanged record, either side (serialisation, vertex-id lookup; confidence low)",
        "150 ns",
        [
            Variant("record75", "75 ns a record", columns=_columns("record75")),
            Variant("record300", "300 ns a record", columns=_columns("record300")),
        ],
    ),
    Choice(
        "PowerGraph's work per edge besides the vertex read (confidence low)",
        "20 ns",
        [Variant("edge10", "10 ns an edge", columns=_columns("edge10"))],
    ),
    Choice(
        "what BI-periodic's reader_engine invalidates",
        "every writer's modified log (Fig 8): all BI-managed objects modified machine-wide",
        [Variant("relevant", "only the lines the socket reads, as on-demand", columns=_columns("relevant"))],
    ),
    Choice(
        "the other enclosure's load latency (no public measurement; docs/design/bi.md §4)",
        "400 ns",
        [
            Variant(
                "cross600",
                "600 ns",
                edit=lambda cfg, labels: _cross(cfg, 600.0),
            )
        ],
    ),
]


def _cross(cfg: dict, ns: float) -> None:
    """Lengthen the NUMALink link so that a load from the other enclosure takes ``ns``."""
    for link in cfg["link"]:
        if {link["a"], link["b"]} == {"asic0", "asic1"}:
            link["latency"] = f"{float(link['latency'].removesuffix('ns')) + (ns - system.CROSS_NS) / 2:.3f}ns"


NOTES = f"""
Calibration (event level, the 8-socket Superdome machine, one core a
socket): 200 loads of lines no cache holds from socket 0's memory, socket
1's (same enclosure) and socket 4's (the other enclosure); {FLUSH_LINES}
clflushopts of lines socket 0 does not hold, and one mfence, per line; in
coherent mode (stock's machine), {DIRTY_LINES} loads by socket 0 of lines
of its memory that socket 1's or socket 4's core has just modified (a
cross-socket dirty hit through the home directory).
Graph: R-MAT scale {SCALE} (--quick {SCALE_QUICK}), edge factor 35,
Graph500's initiator; counts scaled to Twitter-2010 (41.7 M vertices, 1.47 G
edges). Sockets {SOCKETS}, split evenly over the two enclosures (2 sockets:
one in each). PageRank to a 10⁻³ change per vertex (PowerGraph's default).

Modelling choices the paper does not state (each a Choice where it can move
a verdict): the software costs (per edge 20 ns, per record 150 ns, 4 misses
in flight); BI-on-demand invalidates only the lines each socket reads
("tracks modified cache lines more accurately"), BI-periodic every writer's
log as Fig 8's reader_engine does; the L3 is LRU over vertex lines, one a
vertex, under independent references weighted by out-degree (Che's
approximation; checked against an event-level gather in the tests); the
staleness probability (1 − μ) × min(1, period / (2 × gather time)) rounded
to one significant digit.

The one departure from the seed's machine (system.py): the gather loop
overlaps 4 misses, not the core's {system.FILL_BUFFERS} (system.FILL_BUFFERS, which Fig
12's loader runs). Fig 12's loader is a loop of a few instructions a load,
so its misses are bounded by the fill buffers; PowerGraph's gather does
about 50 cycles of work an edge (the 20 ns above) around each vertex read,
so the reorder buffer ({system.ROB} micro-ops on Skylake-SP) holds only a few of
its reads at once. The number is a property of the program on that core,
not of the machine, and is not measured; the Choice re-runs the figure with
the machine's {system.FILL_BUFFERS} (and with 2).

{gm.__doc__}

{system.__doc__}"""

EXPERIMENT = Experiment(
    seed="bi",
    figure="fig13",
    title="BI Fig 13: PageRank on Twitter vs sockets",
    sweep=sweep,
    analyze=analyze,
    plot=plot,
    compare=compare,
    notes=NOTES,
    mutants=MUTANTS,
    choices=CHOICES,
)
