"""GCS Fig 10: the critical section's length (§5.3) — 8 blades of 10
threads, 1 KiB regions, a critical section of 0 to 100 µs.

The paper: reader throughput falls in proportion to the critical
section's length (locks held longer) while their mean latency stays;
writers are unaffected up to 10 µs and degrade sharply at 100 µs."""

from __future__ import annotations

import pandas as pd

from .. import Experiment
from ..variants import Mutant
from ..verdicts import Predicate, Row, flat, text
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
    xs = sorted(r)
    loop = {cs: 1 / r[cs] for cs in xs}  # µs per acquisition over all threads, ∝ a thread's loop
    slope = (loop[100] - loop[10]) / 90
    first = (loop[10] - loop[0]) / 10
    return [
        Row(
            FIG,
            "reader throughput falls in proportion to the critical section",
            None,
            text("§5.3", "the reader lock throughput decreases proportionately to the length of the critical section"),
            r[0] / r[100],
            Predicate(
                "a thread's loop time (1 / throughput) grows by the critical section: its slope from 10 to 100 µs "
                "within 20 % of the slope from 0 to 10 µs",
                first > 0 and abs(slope / first - 1) <= 0.2,
                ", ".join(f"{cs} µs: {r[cs]:.2f} Mops" for cs in xs),
            ),
            "With readers only every acquisition is local: a thread's loop is its lock and unlock calls plus "
            "the critical section.",
        ),
        Row(
            FIG,
            "reader mean latency constant",
            None,
            text("§5.3", "the average acquisition latency remains constant across all critical section lengths"),
            lr[100] / lr[0],
            flat(xs, [lr[cs] for cs in xs], 0.1, "reader mean latency"),
            "Readers never wait for each other: an acquisition is the local grant whatever the holders do.",
        ),
        Row(
            FIG,
            "writers unaffected up to 10 µs",
            None,
            text("§5.3", "Writer lock throughput and latency is unaffected by critical section length up to 10us"),
            w[10] / w[0],
            flat([0, 1, 10], [w[0], w[1], w[10]], 0.25, "writer throughput, 0 to 10 µs"),
            "A hand-off's network path dominates a short critical section.",
            "a hand-off here is ≈ 12 µs a lock, so a 10 µs critical section adds almost as much; the paper's "
            "≈ 33 µs hand-off hides it.",
        ),
        Row(
            FIG,
            "writers degrade sharply at 100 µs",
            None,
            text("§5.3", "observes reduced performance at 100us"),
            w[0] / w[100],
            Predicate(
                "writer throughput at 100 µs < 0.5 × at 0 µs, and latency > 2 ×",
                w[100] < 0.5 * w[0] and lw[100] > 2 * lw[0],
                f"{w[0]:.3f} → {w[100]:.3f} Mops; {lw[0]:.0f} → {lw[100]:.0f} µs",
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
)
