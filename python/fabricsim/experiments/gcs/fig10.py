"""GCS Fig 10: the critical section's length (§5.3) — 8 blades of 10
threads, 1 KiB regions, a critical section of 0 to 100 µs.

The paper: reader throughput falls in proportion to the critical
section's length (locks held longer) while their mean latency stays;
writers are unaffected up to 10 µs and degrade sharply at 100 µs."""

from __future__ import annotations

import pandas as pd

from .. import Experiment
from ..variants import Choice, Mutant, Variant
from ..verdicts import Predicate, Row, all_of, flat, monotone, text
from . import micro, system

FIG = "GCS Fig 10"
CS_US = [0, 1, 10, 100]
X = "cs_us"


def sweep(quick: bool):
    return micro.points(
        "gcs/fig10",
        quick,
        X,
        CS_US,
        lambda cs: system.mind(blades=8, critical_section=f"{cs}us"),
        variants=["gcs"],
    )


def analyze(df: pd.DataFrame) -> pd.DataFrame:
    return micro.analyze(df, X)


def plot(data: pd.DataFrame, fig) -> None:
    micro.plot(data, fig, X, "critical section (µs)", "GCS Fig 10: critical-section length (8 blades × 10 threads)")


def compare(data: pd.DataFrame) -> list[Row]:
    r, w = micro.series(data, "read", "gcs", X), micro.series(data, "write", "gcs", X)
    lr, lw = micro.series(data, "read", "gcs", X, "lat_mean_us"), micro.series(data, "write", "gcs", X, "lat_mean_us")
    q1, q3 = micro.series(data, "read", "gcs", X, "lat_q1_us"), micro.series(data, "read", "gcs", X, "lat_q3_us")
    xs = sorted(r)
    short = [cs for cs in xs if cs <= 10]
    loop = [1 / r[cs] for cs in xs]  # µs per acquisition over all threads, ∝ a thread's loop
    iqr = [q3[cs] - q1[cs] for cs in xs]
    return [
        Row(
            FIG,
            "reader throughput falls in proportion to the critical section",
            None,
            text("§5.3", "the reader lock throughput decreases proportionately to the length of the critical section"),
            r[0] / r[100],
            micro.linear_steps(
                xs,
                loop,
                micro.LINEAR,
                "a thread's loop time (1 / reader throughput), the lock calls plus the critical section,",
            ),
            "With readers only every acquisition is local: a thread's loop is its lock and unlock calls plus "
            "the critical section, so the loop grows by the critical section at every step.",
        ),
        Row(
            FIG,
            "reader mean latency constant",
            None,
            text("§5.3", "the average acquisition latency remains constant across all critical section lengths"),
            lr[100] / lr[0],
            flat(xs, [lr[cs] for cs in xs], micro.FLAT, "reader mean latency"),
            "Readers never wait for each other: an acquisition is the local grant whatever the holders do.",
        ),
        Row(
            FIG,
            "reader latency variability falls with the critical section",
            None,
            text(
                "§5.3",
                "we find that the variability in latency decreases as the critical section length increases",
            ),
            iqr[-1] - iqr[0],
            monotone(xs, iqr, increasing=False, what="reader latency's interquartile range (µs)"),
            "fabricsim's value: the interquartile range at 100 µs minus at 0 µs. "
            "The paper's box plots show the spread as the interquartile range (whiskers at 1.5 × it): "
            "fewer acquisitions a second meet fewer others at the blade's controller.",
            "a reader's acquisition here is the thread's call and the blade controller's 1 µs, and the "
            "controller serves the blade's threads without a queue that lengthens with their rate: every "
            "acquisition takes the same 1.1 µs, so there is no spread to shrink (the paper's spread comes from "
            "contention at the blade this model does not have).",
        ),
        Row(
            FIG,
            "writers unaffected up to 10 µs",
            None,
            text(
                "§5.3",
                "Both writer lock throughput and latency remain largely unaffected by critical section length "
                "up to 10us",
            ),
            w[10] / w[0],
            all_of(
                "writer throughput and mean latency, 0 to 10 µs",
                {
                    "throughput": flat(short, [w[cs] for cs in short], micro.NEARLY_FLAT, "throughput"),
                    "latency": flat(short, [lw[cs] for cs in short], micro.NEARLY_FLAT, "latency"),
                },
            ),
            "A hand-off's network path dominates a short critical section.",
            "a hand-off here is ≈ 12 µs a lock, so a 10 µs critical section adds almost as much; the paper's "
            "≈ 33 µs hand-off hides it.",
        ),
        Row(
            FIG,
            "writers degrade sharply at 100 µs",
            None,
            text("§5.3", "observe sharp changes at 100us"),
            w[10] / w[100],
            Predicate(
                f"writer throughput at 100 µs < {micro.SHARP:g} × at 10 µs, "
                f"and latency > {1 / micro.SHARP:g} × at 10 µs",
                w[100] < micro.SHARP * w[10] and lw[100] > lw[10] / micro.SHARP,
                f"{w[10]:.3f} → {w[100]:.3f} Mops; {lw[10]:.0f} → {lw[100]:.0f} µs",
            ),
            "Each waiter waits for every critical section ahead of it.",
        ),
    ]


MUTANTS = [
    Mutant(
        "critical-section-ignored",
        "every point runs an empty critical section",
        set={"protocol.gcs.critical_section": "0us"},
        flips=["reader throughput falls in proportion to the critical section", "writers degrade sharply at 100 µs"],
    ),
]

CHOICES = [
    micro.WINDOW,
    Choice(
        "the one-way network latency between a blade and the switch",
        "2 µs (a hand-off ≈ 6.3 µs, a miss ≈ 11.6 µs)",
        [
            Variant(
                "4 µs",
                "a hand-off ≈ 10.3 µs: the top of the paper's 5-10 µs a transaction (§1), against the critical section",
                edit=lambda cfg, labels: system.set_net(cfg, "4us"),
            )
        ],
    ),
]

EXPERIMENT = Experiment(
    seed="gcs",
    figure="fig10",
    title="GCS Fig 10: critical-section length",
    sweep=sweep,
    analyze=analyze,
    plot=plot,
    compare=compare,
    notes=micro.NOTES,
    mutants=MUTANTS,
    choices=CHOICES,
)
