"""GCS Fig 7: MIND-KVS throughput against compute blades (§5.1) — a hash
table with one reader-writer lock per bucket, YCSB's scrambled Zipfian
keys (θ = 0.99), 1 to 8 blades of 10 threads; GCS against the layered
`pthread_rwlock` on MIND's MSI.

The paper: on read-only Y_C GCS scales linearly to 31.2 Mops at 8 blades,
331× pthread; on Y_A (50 % updates) and Y_W (all updates) both drop
sharply from 1 to 2 blades, then GCS holds Y_W and scales Y_A, 19× and
22× over pthread."""

from __future__ import annotations

import pandas as pd

from ...sweeps import Sweep, build
from .. import Experiment
from ..plots import figure_legend
from ..variants import Choice, Mutant, Variant
from ..verdicts import Predicate, Row, Tolerance, all_of, flat, greater, monotone, proportional, text
from . import micro, system

FIG = "GCS Fig 7"
BLADES = [1, 2, 4, 8]
QUICK_BLADES = [1, 2, 8]
WORKLOADS = {"Y_C": 1.0, "Y_A": 0.5, "Y_W": 0.0}
VARIANTS = ["gcs", "pthread"]
LABEL = {"gcs": "GCS", "pthread": "pthread_rwlock"}
BUCKETS = 1000

NOTES = (
    f"""
MIND-KVS (§5.1): {BUCKETS} buckets, each protected by a reader-writer lock
whose region is the bucket's 1 KiB record (the paper gives no record or
bucket count: one YCSB record of the default 1 KiB per bucket). A GET
read-locks the bucket and reads the record, a PUT write-locks it and
writes the record. Keys follow YCSB's scrambled Zipfian (θ = 0.99, bit for
bit the YCSB generator) over the buckets. Each thread makes 2000
operations (--quick too: it runs fewer blade counts). Throughput is YCSB's: every operation over the
run's length, cold start included (each blade's first touch of a bucket is a miss: about a tenth of the
GETs of the run at 8 blades). (The steady-state window the other figures use closes when
the first thread is done; the layered lock lets a blade's own threads
re-take a hot bucket while other blades' threads sleep, so its window
shows the lucky threads only: 4.2 Mops on Y_W at 8 blades in the window,
0.12 Mops over the run.) The paper does not say which it measured: the
window is this figure's declared alternative (a Choice), and the report
shows which verdicts change with it.

pthread_rwlock (glibc's reader-writer lock, reduced): every rdlock,
wrlock and unlock is a read-modify-write of the lock word, which sits on a
page of its own, so each needs that page in M over MIND's MSI; then the
record's page is read (S) or written (M). A thread that finds the lock
taken marks its blade in the lock word and sleeps; the unlocker wakes
those blades (a futex-style queue: the kernel of each blade keeps its
sleepers). GCS infers each bucket's region (§3.2), so its grant carries
the record.
"""
    + system.__doc__
)


def sweep(quick: bool) -> Sweep:
    # measured, after as many for warm-up; --quick drops blade counts, not operations (fewer would
    # leave the cold misses of the first acquisitions in YCSB's run-long throughput)
    n = 1000
    points = []
    for b in QUICK_BLADES if quick else BLADES:
        base = system.mind(blades=b, pattern="zipf", locks=BUCKETS, requests=n)
        base["sim"]["max_time"] = "100s"
        sw = build(
            base,
            grid={"protocol.gcs.variant": VARIANTS, "workload.read_fraction": list(WORKLOADS.values())},
            metrics=[],
            name="gcs/fig07",
            extract="fabricsim.experiments.gcs.system:lock_metrics",
        )
        for p in sw.points:
            wl = next(k for k, v in WORKLOADS.items() if v == p.params["workload.read_fraction"])
            p.labels = {"blades": b, "variant": p.params["protocol.gcs.variant"], "workload": wl}
        points += sw.points
    return Sweep("gcs/fig07", points)


def analyze(df: pd.DataFrame) -> pd.DataFrame:
    d = df.sort_values(["workload", "variant", "blades"]).copy()
    # YCSB's throughput: all operations over the run (see NOTES)
    d["window_mops"] = d["mops"]
    d["mops"] = d["mops_run"]
    return d[["workload", "variant", "blades", "mops", "window_mops", "lat_mean_us", "outcome"]].reset_index(drop=True)


def plot(data: pd.DataFrame, fig) -> None:
    axes = fig.subplots(1, 3)
    for ax, wl in zip(axes, WORKLOADS):
        for v in VARIANTS:
            d = data[(data["workload"] == wl) & (data["variant"] == v)]
            ax.plot(d["blades"], d["mops"], marker="o", label=LABEL[v] if wl == "Y_C" else None)
        ax.set_yscale("log")
        ax.set_title(wl)
        ax.set_xlabel("compute blades (10 threads each)")
        ax.set_ylabel("throughput (Mops)")
        ax.grid(True, alpha=0.3)
    figure_legend(fig)
    fig.suptitle("GCS Fig 7: MIND-KVS on YCSB (Zipf 0.99)")


def _s(data: pd.DataFrame, wl: str, v: str) -> dict[int, float]:
    d = data[(data["workload"] == wl) & (data["variant"] == v)]
    return dict(zip(d["blades"], d["mops"]))


def compare(data: pd.DataFrame) -> list[Row]:
    g = {wl: _s(data, wl, "gcs") for wl in WORKLOADS}
    p = {wl: _s(data, wl, "pthread") for wl in WORKLOADS}
    blades = sorted(g["Y_C"])
    top = blades[-1]
    multi = [b for b in blades if b >= 2]
    why_ratio = (
        "pthread here pays MIND's page transfers (through the memory blade) for every lock and unlock but "
        "no more: about 1 Mops at 8 blades on Y_C, where the paper measured ≈ 0.09 Mops (31.2 / 331). The "
        "real layered lock adds a page "
        "fault and the kernel's futex calls to every transfer, and the lock word's page (with others' words "
        "on it) ping-pongs between blades; those costs are not in this model."
    )
    return [
        Row(
            FIG,
            f"GCS on Y_C at {top} blades (Mops)",
            31.2,
            text("§5.1", "achieving 31.2 Mops throughput at 8 blades"),
            g["Y_C"][top],
            Tolerance(),
            "Read locks of hot buckets stay cached at every blade (locality) and need no queue: each GET is "
            "a local lock call and release (≈ 2.2 µs a thread).",
        ),
        Row(
            FIG,
            "GCS scales linearly on Y_C",
            None,
            text("Fig 7 caption", "GCS enables linear scaling from 1 to 8 compute blades for the read-only Y_C"),
            g["Y_C"][top] / g["Y_C"][1],
            proportional(blades, [g["Y_C"][b] for b in blades], micro.LINEAR, "GCS Y_C throughput"),
            "Readers never invalidate each other.",
        ),
        Row(
            FIG,
            f"GCS ÷ pthread on Y_C at {top} blades (×)",
            331.0,
            text("§5.1", "331× higher compared to the layered pthread_rwlock design"),
            g["Y_C"][top] / p["Y_C"][top],
            Tolerance(),
            "pthread writes its lock word even for a read lock, so every GET moves the word's page in M "
            "between blades, twice (lock and unlock).",
            why_ratio,
        ),
        Row(
            FIG,
            f"GCS ÷ pthread on Y_A at {top} blades (×)",
            19.0,
            text("§5.1", "higher absolute throughput — 19× and 22× for Y_A and Y_W"),
            g["Y_A"][top] / p["Y_A"][top],
            Tolerance(),
            "Updates invalidate for both; pthread adds the lock word's transfers and its sleepers' wake-ups.",
            "the ratio rests on how pthread degrades under contention on hot buckets (sleep and wake-up round "
            "trips on top of the word's two page transfers an operation); see the notes on its unfairness.",
        ),
        Row(
            FIG,
            f"GCS ÷ pthread on Y_W at {top} blades (×)",
            22.0,
            text("§5.1", "higher absolute throughput — 19× and 22× for Y_A and Y_W"),
            g["Y_W"][top] / p["Y_W"][top],
            Tolerance(),
            "Every operation is a write lock: GCS hands each hot bucket from blade to blade with its record "
            "in one transaction, pthread needs the word's page, then the record's page, then the word's again.",
            "as for Y_A: the ratio rests on the modelled pthread's behaviour under contention.",
        ),
        Row(
            FIG,
            "both drop sharply from 1 to 2 blades on Y_A and Y_W",
            None,
            text("§5.1", "both GCS and pthread_rwlock observe a sharp performance drop moving from 1 to 2 blades"),
            g["Y_W"][2] / g["Y_W"][1],
            all_of(
                f"throughput at 2 blades < {micro.SHARP:g} × at 1",
                {
                    f"{v} {wl}": Predicate("", s[wl][2] < micro.SHARP * s[wl][1], f"{s[wl][1]:.2f} → {s[wl][2]:.2f}")
                    for v, s in (("GCS", g), ("pthread", p))
                    for wl in ("Y_A", "Y_W")
                },
            ),
            "One blade caches every hot bucket; with two, updates move them between blades over the network.",
        ),
        Row(
            FIG,
            "GCS on Y_W flat from 2 to 8 blades",
            None,
            text("§5.1", "nearly constant throughput for the write-only Y_W workload from 2 to 8 blades"),
            g["Y_W"][top] / g["Y_W"][2],
            flat(multi, [g["Y_W"][b] for b in multi], micro.NEARLY_FLAT, "GCS Y_W throughput"),
            "The hot buckets' hand-offs, one writer at a time, set the throughput, not the number of blades.",
            "GCS's Y_W throughput rises by 42 % from 2 to 8 blades here (1.32 → 1.87 Mops; 64 % in the "
            "steady-state window): Zipf θ = 0.99 over 1,000 buckets sends 62 % of the updates outside the ten "
            "hottest buckets (13 % to the hottest), and the tail's hand-offs run in parallel, so more threads "
            "add throughput; the paper's flat curve implies its hottest buckets (or a per-blade cost this model "
            "lacks) bound the run.",
        ),
        Row(
            FIG,
            "GCS on Y_A scales from 2 to 8 blades",
            None,
            text("Fig 7 caption", "For the write-heavy Y_A, GCS ... preserves throughput scaling from 2 to 8 blades"),
            g["Y_A"][top] / g["Y_A"][2],
            monotone(
                multi,
                [g["Y_A"][b] for b in multi],
                increasing=True,
                what="GCS Y_A throughput",
                min_change=micro.FLAT,
            ),
            "Half the operations are GETs, which stay local on buckets no writer took; more blades add "
            "threads that find them cached.",
        ),
        Row(
            FIG,
            "GCS above pthread from 2 blades, in throughput and in scaling, every workload",
            None,
            text("§5.1", "better absolute performance as well as performance scaling"),
            min(g[wl][b] / p[wl][b] for wl in WORKLOADS for b in multi),
            all_of(
                f"GCS > pthread at every blade count from 2, and GCS's throughput at {top} ÷ at 2 > pthread's",
                {
                    wl: all_of(
                        "",
                        {
                            "worst ratio": greater(
                                min(g[wl][b] / p[wl][b] for b in multi), 1.0, "worst GCS ÷ pthread", "1"
                            ),
                            "scaling": greater(
                                g[wl][top] / g[wl][2], p[wl][top] / p[wl][2], "GCS's scaling", "pthread's"
                            ),
                        },
                    )
                    for wl in WORKLOADS
                },
            ),
            "Fewer coherence transactions an operation (§2.2: one per acquire and one per release, against "
            "the layered lock's word and data transfers).",
        ),
    ]


MUTANTS = [
    Mutant(
        "gcs-as-pthread",
        "the GCS runs use the layered pthread lock",
        set={"protocol.gcs.variant": "pthread"},
        when=lambda labels: labels.get("variant") == "gcs",
        flips=[
            "GCS on Y_C at 8 blades (Mops)",
            "GCS above pthread from 2 blades, in throughput and in scaling, every workload",
        ],
    ),
]

CHOICES = [
    Choice(
        "the throughput's measurement",
        "YCSB's: every operation over the run's length",
        [
            Variant(
                "steady-state window",
                "acquisitions inside the steady-state window (every thread still running), as Figs 8-11 measure",
                columns={"mops": "window_mops"},
            )
        ],
    ),
    Choice(
        "the number of buckets",
        f"{BUCKETS}",
        [Variant("10000", "ten times the buckets: a colder tail", set={"workload.footprint": f"{10 * BUCKETS * 64}B"})],
    ),
]

EXPERIMENT = Experiment(
    seed="gcs",
    figure="fig07",
    title="GCS Fig 7: MIND-KVS throughput vs compute blades",
    sweep=sweep,
    analyze=analyze,
    plot=plot,
    compare=compare,
    notes=NOTES,
    mutants=MUTANTS,
    choices=CHOICES,
)
