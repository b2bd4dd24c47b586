"""ESF Fig 17: bus utility (busy fraction, averaged over both directions) and
transmission efficiency (payload time over busy time).

The paper: half duplex is almost fully utilised whatever the mix; full
duplex with one access type and no header uses half the bus (one direction),
approaching 1 as the mix rises; efficiency falls as the header grows."""

from __future__ import annotations

import pandas as pd

from .. import Comparison, Experiment
from . import duplex


def sweep(quick: bool):
    return duplex.sweep(quick, "esf/duplex")


def plot(data: pd.DataFrame, fig) -> None:
    axes = fig.subplots(2, 2, sharex=True)
    for col, dx in enumerate(["full", "half"]):
        for h in duplex.HEADERS:
            d = data[(data["duplex"] == dx) & (data["header_overhead"] == h)]
            axes[0][col].plot(d["mix"], d["bus_utility"], marker="o", label=f"header {h:g}")
            axes[1][col].plot(d["mix"], d["bus_efficiency"], marker="o", label=f"header {h:g}")
        axes[0][col].set_title(f"{dx} duplex")
        axes[1][col].set_xlabel("R:W ratio")
        for r in (0, 1):
            axes[r][col].set_ylim(0, 1.05)
            axes[r][col].grid(True, alpha=0.3)
    axes[0][0].set_ylabel("bus utility")
    axes[1][0].set_ylabel("transmission efficiency")
    axes[0][1].legend(fontsize="small")
    fig.suptitle("ESF Fig 17: bus utility and transmission efficiency")


def _at(data, dx, h, mix, col):
    d = data[(data["duplex"] == dx) & (data["header_overhead"] == h) & (data["mix"] == mix)]
    return float(d[col].iloc[0])


def compare(data: pd.DataFrame) -> list[Comparison]:
    full_util = [_at(data, "full", 0.0, m, "bus_utility") for m in ["1:0", "3:1", "1:1"]]
    rising = all(b > a for a, b in zip(full_util, full_util[1:]))
    eff = [_at(data, "full", h, "1:1", "bus_efficiency") for h in duplex.HEADERS]
    falling = all(b < a for a, b in zip(eff, eff[1:]))
    half_util = [_at(data, "half", h, m, "bus_utility") for h in duplex.HEADERS for m in duplex.MIX_LABELS.values()]
    return [
        Comparison(
            "ESF Fig 17",
            "full duplex utility, read-only, header 0",
            0.5,
            full_util[0],
            0.05,
            rising,
            "",
        ),
        Comparison(
            "ESF Fig 17",
            "full duplex utility, 1:1, header 0",
            1.0,
            full_util[2],
            0.05,
            rising,
            "the paper: 'approaches 1'",
        ),
        Comparison(
            "ESF Fig 17",
            "half duplex utility (min over mix and header)",
            1.0,
            min(half_util),
            0.05,
            True,
            "the paper: 'almost fully utilized'",
        ),
        Comparison(
            "ESF Fig 17",
            "full duplex efficiency, 1:1, header = payload",
            None,
            eff[-1],
            0.05,
            falling,
            "the paper gives no number, only that efficiency falls as the header grows; "
            "0.5 follows from header packets as long as data packets",
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
)
