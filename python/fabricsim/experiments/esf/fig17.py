"""ESF Fig 17: bus utility (busy fraction, averaged over the bus's
transmission directions) and transmission efficiency (payload time over
busy time).

The paper (Sec. V-D): half duplex is almost fully utilised whatever the mix;
full duplex with one access type and no header uses half the bus (one
direction), approaching 1 as the mix rises; efficiency falls as the header
grows, and single-type utility rises with it."""

from __future__ import annotations

import dataclasses

import pandas as pd

from .. import Experiment
from ..plots import figure_legend, paper_hline, paper_point
from ..verdicts import Row, Tolerance, all_of, approaches, at_limit, bound, flat, monotone, text
from . import duplex
from .duplex import SECTION

FIG = "ESF Fig 17"
MIXES = list(duplex.MIX_LABELS.values())
MARKERS = ["o", "s", "^", "D", "v"]


def sweep(quick: bool):
    return duplex.sweep(quick, "esf/duplex")


def plot(data: pd.DataFrame, fig) -> None:
    axes = fig.subplots(2, 2, sharex=True)
    for col, dx in enumerate(["full", "half"]):
        for i, h in enumerate(duplex.HEADERS):
            d = data[(data["duplex"] == dx) & (data["header_overhead"] == h)]
            x = [MIXES.index(m) + 0.06 * (i - 2) for m in d["mix"]]
            label = f"header/payload ratio {h:g}"
            axes[0][col].plot(x, d["bus_utility"], marker=MARKERS[i], label=label)
            axes[1][col].plot(x, d["bus_efficiency"], marker=MARKERS[i], label=label)
        axes[0][col].set_title(f"{dx} duplex")
        axes[1][col].set_xlabel("read:write ratio")
        axes[1][col].set_xticks(range(len(MIXES)), MIXES)
        for r in (0, 1):
            axes[r][col].set_ylim(0, 1.1)
            axes[r][col].grid(True, alpha=0.3)
    for m in ("1:0", "0:1"):
        paper_point(axes[0][0], MIXES.index(m), 0.5, "text", label="paper (text): single type, header 0")
    paper_point(axes[0][0], MIXES.index("1:1"), 1.0, "bound", marker="s", label="paper (bound): 'approaches 1'")
    paper_hline(axes[0][1], 1.0, "text", label="paper (text): 'almost fully utilized'")
    axes[0][0].set_ylabel("bus utility (busy fraction)")
    axes[1][0].set_ylabel("transmission efficiency\n(payload time / busy time)")
    figure_legend(fig)
    fig.suptitle("ESF Fig 17: bus utility and transmission efficiency (series offset slightly by header)")


def _at(data, dx, h, mix, col):
    d = data[(data["duplex"] == dx) & (data["header_overhead"] == h) & (data["mix"] == mix)]
    return float(d[col].iloc[0])


ONE_WAY = (
    "With one access type, data uses one direction and the other carries only header-only packets, "
    "which take no time at header 0: one of two directions is busy."
)
HALF = "A half-duplex bus saturated by a closed loop is always sending in one direction or the other."
HEADER = "Header-only packets of h x 64 B take bus time without payload."


def compare(data: pd.DataFrame) -> list[Row]:
    hs = duplex.HEADERS
    util = "bus_utility"
    eff = "bus_efficiency"
    read_side = ["1:0", "3:1", "1:1"]
    write_side = ["0:1", "1:3", "1:1"]
    rising = [_at(data, "full", 0.0, m, util) for m in read_side]
    rising_w = [_at(data, "full", 0.0, m, util) for m in write_side]
    up_r = approaches(read_side, rising, 1.0, tol=0.05, strict=True)
    up = all_of(
        up_r.words.replace("with x", "with the mix, from either single type"),
        {"from read-only": up_r, "from write-only": approaches(write_side, rising_w, 1.0, tol=0.05, strict=True)},
    )
    half = [_at(data, "half", h, m, util) for h in hs for m in MIXES]
    half_x = [f"h{h:g} {m}" for h in hs for m in MIXES]
    single_util = [_at(data, "full", h, "1:0", util) for h in hs]
    single_w = [_at(data, "full", h, "0:1", util) for h in hs]
    hx = [f"h{h:g}" for h in hs]
    grow = all_of(
        "read-only and write-only utility strictly rise with the header, by ≥ 20% overall",
        {
            "read-only": monotone(hx, single_util, increasing=True, min_change=0.2),
            "write-only": monotone(hx, single_w, increasing=True, min_change=0.2),
        },
    )
    falling = {(dx, m): [_at(data, dx, h, m, eff) for h in hs] for dx in ("full", "half") for m in MIXES}
    fall_checks = {k: monotone(hs, v, increasing=False) for k, v in falling.items()}
    bad = [f"{dx} {m}" for (dx, m), p in fall_checks.items() if not p.holds]
    eff_pred = monotone(hs, falling[("full", "1:1")], increasing=False)
    eff_pred = dataclasses.replace(
        eff_pred,
        words="efficiency strictly falls as the header grows, for every mix and both buses",
        holds=not bad,
        detail=f"full 1:1: {eff_pred.detail}" + (f"; not falling: {', '.join(bad)}" if bad else ""),
    )
    single = "the single-type scenario only utilized half of the bus (i.e., one direction in a total of two)"
    return [
        Row(
            FIG,
            "full duplex utility, read-only, header 0",
            0.5,
            text(SECTION, single),
            _at(data, "full", 0.0, "1:0", util),
            Tolerance(),
            ONE_WAY,
        ),
        Row(
            FIG,
            "full duplex utility, write-only, header 0",
            0.5,
            text(SECTION, single),
            _at(data, "full", 0.0, "0:1", util),
            Tolerance(),
            ONE_WAY,
        ),
        Row(
            FIG,
            "full duplex utility rises to 1 with the mix, header 0",
            1.0,
            bound(SECTION, "As the mix ratio increases, the bus utility approaches 1"),
            rising[-1],
            up,
            "Mixing puts payload in the idle direction until both are busy.",
        ),
        Row(
            FIG,
            "half duplex utility ≈ 1 at every mix and header",
            1.0,
            text(
                SECTION,
                "In the case of half-duplex bus, the bus is almost fully utilized, and the utility remain unchanged "
                "as read-write ratio varies",
            ),
            min(half),
            all_of(
                "at 1 at every mix and header (from 5% below to 1% above), and flat over the mixes at each header "
                "(max / min - 1 ≤ 5%)",
                {
                    "level": at_limit(half_x, half, [1.0] * len(half), 0.05),
                    **{f"h{h:g} flat": flat(MIXES, [_at(data, "half", h, m, util) for m in MIXES], 0.05) for h in hs},
                },
            ),
            HALF,
        ),
        Row(
            FIG,
            "efficiency falls as the header grows",
            None,
            text(
                SECTION,
                "By increasing the header overhead, more bus time will be cost on non-payload transmission, "
                "decreasing the transmission efficiency",
            ),
            falling[("full", "1:1")][-1],
            eff_pred,
            HEADER,
        ),
        Row(
            FIG,
            "full duplex single-type utility rises with the header",
            None,
            text(
                SECTION,
                "Because more time is spent on header transmission, the bus utility of single-type scenarios increases",
            ),
            single_util[-1],
            grow,
            f"{ONE_WAY} {HEADER}",
        ),
    ]


MUTANTS = [
    dataclasses.replace(
        duplex.SHARED_WIRE,
        flips=[
            "full duplex utility, read-only, header 0",
            "full duplex utility, write-only, header 0",
            "full duplex utility rises to 1 with the mix, header 0",
            "full duplex single-type utility rises with the header",
        ],
    ),
    dataclasses.replace(
        duplex.HALF_AS_FULL,
        flips=["half duplex utility ≈ 1 at every mix and header"],
    ),
    dataclasses.replace(
        duplex.FREE_HEADERS,
        flips=["efficiency falls as the header grows", "full duplex single-type utility rises with the header"],
    ),
]

EXPERIMENT = Experiment(
    seed="esf",
    figure="fig17",
    title="ESF Fig 17: bus utility and transmission efficiency",
    sweep=sweep,
    analyze=duplex.tidy,
    plot=plot,
    compare=compare,
    notes=duplex.NOTES,
    mutants=MUTANTS,
    choices=duplex.CHOICES,
)
