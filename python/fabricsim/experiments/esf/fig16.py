"""ESF Fig 16: bandwidth against R:W mix and header overhead, full versus
half duplex, normalised to the read-only bandwidth of each setting.

The paper: half duplex stays almost constant; full duplex gains from mixing,
nearly 2x at 1:1 with zero header, the gain shrinking as the header grows and
vanishing when the header is as long as the payload."""

from __future__ import annotations

import pandas as pd

from .. import Comparison, Experiment
from . import duplex


def sweep(quick: bool):
    return duplex.sweep(quick, "esf/duplex")


def plot(data: pd.DataFrame, fig) -> None:
    axes = fig.subplots(1, 2, sharey=True)
    for ax, dx in zip(axes, ["full", "half"]):
        for h in duplex.HEADERS:
            d = data[(data["duplex"] == dx) & (data["header_overhead"] == h)]
            ax.plot(d["mix"], d["normalized_bandwidth"], marker="o", label=f"header {h:g}")
        ax.set_title(f"{dx} duplex")
        ax.set_xlabel("R:W ratio")
        ax.grid(True, alpha=0.3)
    axes[0].set_ylabel("bandwidth / read-only bandwidth")
    axes[1].legend()
    fig.suptitle("ESF Fig 16: bandwidth by R:W ratio and header overhead")


def _at(data, dx, h, mix):
    d = data[(data["duplex"] == dx) & (data["header_overhead"] == h) & (data["mix"] == mix)]
    return float(d["normalized_bandwidth"].iloc[0])


def compare(data: pd.DataFrame) -> list[Comparison]:
    rows = []
    gains = [_at(data, "full", h, "1:1") for h in duplex.HEADERS]
    falling = all(b < a for a, b in zip(gains, gains[1:]))
    rows.append(
        Comparison(
            "ESF Fig 16",
            "full duplex, header 0, 1:1 / read-only",
            2.0,
            gains[0],
            0.05,
            falling,
            "the paper says 'nearly double'",
        )
    )
    rows.append(
        Comparison(
            "ESF Fig 16",
            "full duplex, header = payload, 1:1 / read-only",
            1.0,
            gains[-1],
            0.05,
            falling,
            "the paper says the improvement 'drops to zero'",
        )
    )
    half = [_at(data, "half", h, m) for h in duplex.HEADERS for m in duplex.MIX_LABELS.values()]
    rows.append(
        Comparison(
            "ESF Fig 16",
            "half duplex, any mix and header / read-only (max)",
            1.0,
            max(half),
            0.05,
            True,
            "the paper: 'stays almost constant'",
        )
    )
    rows.append(
        Comparison(
            "ESF Fig 16",
            "half duplex, any mix and header / read-only (min)",
            1.0,
            min(half),
            0.05,
            True,
            "",
        )
    )
    return rows


EXPERIMENT = Experiment(
    seed="esf",
    figure="fig16",
    title="ESF Fig 16: full vs half duplex bandwidth by R:W mix and header overhead",
    sweep=sweep,
    analyze=duplex.tidy,
    plot=plot,
    compare=compare,
    notes=duplex.NOTES,
)
