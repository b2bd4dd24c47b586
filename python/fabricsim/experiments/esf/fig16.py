"""ESF Fig 16: bandwidth against R:W mix and header overhead, full versus
half duplex, normalised to the read-only bandwidth of each setting.

The paper (Sec. V-D): half duplex stays almost constant; full duplex gains
from mixing, nearly 2x at 1:1 with zero header, the gain shrinking as the
header grows and vanishing when the header is as long as the payload."""

from __future__ import annotations

import dataclasses
import math

import pandas as pd

from .. import Experiment
from ..plots import figure_legend, paper_hline, paper_point
from ..verdicts import Predicate, Row, Tolerance, at_limit, bound, flat, monotone, text
from . import duplex
from .duplex import SECTION

FIG = "ESF Fig 16"
MIXES = list(duplex.MIX_LABELS.values())
MARKERS = ["o", "s", "^", "D", "v"]


def sweep(quick: bool):
    return duplex.sweep(quick, "esf/duplex")


def _x(mix: str, i: int) -> float:
    # series that coincide (every header in half duplex) stay visible: a small offset per header
    return MIXES.index(mix) + 0.06 * (i - 2)


def plot(data: pd.DataFrame, fig) -> None:
    axes = fig.subplots(1, 2, sharey=True)
    for ax, dx in zip(axes, ["full", "half"]):
        for i, h in enumerate(duplex.HEADERS):
            d = data[(data["duplex"] == dx) & (data["header_overhead"] == h)]
            ax.plot(
                [_x(m, i) for m in d["mix"]],
                d["normalized_bandwidth"],
                marker=MARKERS[i],
                label=f"header/payload ratio {h:g}",
            )
        ax.set_title(f"{dx} duplex")
        ax.set_xticks(range(len(MIXES)), MIXES)
        ax.set_xlabel("read:write ratio")
        ax.grid(True, alpha=0.3)
    paper_point(axes[0], MIXES.index("1:1"), 2.0, "text", label="paper (text): header 0, 1:1 'nearly double'")
    paper_point(
        axes[0],
        MIXES.index("1:1"),
        1.0,
        "text",
        marker="s",
        label="paper (text): header = payload, 1:1 'drops to zero'",
    )
    paper_hline(axes[1], 1.0, "text", label="paper (text): 'stays almost constant'")
    axes[0].set_ylabel("bandwidth / read-only bandwidth (same header)")
    figure_legend(fig)
    axes[1].set_ylim(0, 2.3)
    fig.suptitle("ESF Fig 16: bandwidth by R:W ratio and header overhead (half-duplex series offset slightly)")


def _at(data, dx, h, mix):
    d = data[(data["duplex"] == dx) & (data["header_overhead"] == h) & (data["mix"] == mix)]
    return float(d["normalized_bandwidth"].iloc[0])


MIXING = (
    "Reads carry data towards the requester and writes away from it; in full duplex a mix fills both "
    "directions, so with header-only packets h x 64 B long the 1:1 gain is 2/(1+h)."
)
HALF = "A half-duplex bus carries one direction at a time, so mixing adds no capacity: every mix moves the same bytes."


def compare(data: pd.DataFrame) -> list[Row]:
    hs = duplex.HEADERS
    gains = [_at(data, "full", h, "1:1") for h in hs]
    half = [_at(data, "half", h, m) for h in hs for m in MIXES]
    half_x = [f"h{h:g} {m}" for h in hs for m in MIXES]
    full0 = {m: _at(data, "full", 0.0, m) for m in MIXES}
    single = max(full0["1:0"], full0["0:1"])
    mixed = min(full0["3:1"], full0["1:1"], full0["1:3"])
    range_full = max(full0.values()) - min(full0.values())
    half0 = [_at(data, "half", 0.0, m) for m in MIXES]
    range_half = max(half0) - min(half0)
    return [
        Row(
            FIG,
            "full duplex, header 0, 1:1 / read-only",
            2.0,
            bound(
                SECTION,
                "with zero header overhead, a 1:1 mix of read and write packets can nearly double the system bandwidth",
            ),
            gains[0],
            at_limit(["h0 1:1"], [gains[0]], [2.0], 0.10),
            MIXING,
        ),
        Row(
            FIG,
            "full duplex, 1:1 gain falls as the header grows",
            None,
            text(SECTION, "As header overhead increases, the improvement of read-write mixing decreases"),
            gains[-1] / gains[0],
            monotone([f"h{h:g}" for h in hs], gains, increasing=False, what="1:1 / read-only", min_change=0.3),
            MIXING,
        ),
        Row(
            FIG,
            "full duplex, header = payload, 1:1 / read-only",
            1.0,
            text(SECTION, "When the headers have the same length of payloads, the improvement drops to zero"),
            gains[-1],
            Tolerance(),
            "With header-only packets as long as data packets, read-only traffic already fills both directions.",
        ),
        Row(
            FIG,
            "full duplex, header 0: every mix beats single-type",
            None,
            text(SECTION, "mixing read and write requests enhances the bandwidth of a full-duplex bus system"),
            mixed / single,
            Predicate(
                "the least mixed R:W ratio (3:1, 1:1, 1:3) > 1.1 × the best single-type ratio (1:0, 0:1)",
                math.isfinite(mixed) and math.isfinite(single) and mixed > 1.1 * single,
                f"{mixed:.3g} vs {single:.3g}",
            ),
            MIXING,
        ),
        Row(
            FIG,
            "header 0: full duplex more affected by the mix than half",
            None,
            text(SECTION, "the bandwidth of a full-duplex bus system is more affected by the read-write ratio"),
            range_full,
            Predicate(
                "range over mixes (max - min, normalised) of full duplex > half duplex's + 0.1",
                math.isfinite(range_full) and math.isfinite(range_half) and range_full > range_half + 0.1,
                f"full {range_full:.3g}, half {range_half:.3g}",
            ),
            f"{MIXING} {HALF}",
        ),
        Row(
            FIG,
            "half duplex: flat over every mix and header",
            None,
            text(SECTION, "the system bandwidth stays almost constant for a half-duplex bus"),
            min(half),
            flat(half_x, half, 0.05),
            HALF,
        ),
    ]


MUTANTS = [
    dataclasses.replace(
        duplex.SHARED_WIRE,
        flips=[
            "full duplex, header 0, 1:1 / read-only",
            "full duplex, 1:1 gain falls as the header grows",
            "full duplex, header 0: every mix beats single-type",
            "header 0: full duplex more affected by the mix than half",
        ],
    ),
    dataclasses.replace(
        duplex.HALF_AS_FULL,
        flips=[
            "half duplex: flat over every mix and header",
            "header 0: full duplex more affected by the mix than half",
        ],
    ),
    dataclasses.replace(
        duplex.FREE_HEADERS,
        flips=[
            "full duplex, 1:1 gain falls as the header grows",
            "full duplex, header = payload, 1:1 / read-only",
        ],
    ),
]

EXPERIMENT = Experiment(
    seed="esf",
    figure="fig16",
    title="ESF Fig 16: full vs half duplex bandwidth by R:W mix and header overhead",
    sweep=sweep,
    analyze=duplex.tidy,
    plot=plot,
    compare=compare,
    notes=duplex.NOTES,
    mutants=MUTANTS,
    choices=duplex.CHOICES,
)
