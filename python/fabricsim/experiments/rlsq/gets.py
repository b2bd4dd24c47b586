"""The sweep, analysis and plot Figs 7 and 8 share: GET protocols against
the item size in §6.4's setting (``system.emulation``)."""

from __future__ import annotations

from typing import Callable

import pandas as pd

from ...sweeps import Sweep, build
from ..plots import figure_legend
from . import system


def sweep(
    name: str, gets: list[str], sizes: list[int], quick: bool, edit: Callable[[str, dict], None] | None = None
) -> Sweep:
    """One run per (item size, GET protocol); ``edit(get, config)`` adjusts a run's configuration."""
    points = []
    for size in sizes:
        for get in gets:
            b = system.emulation(get, size, quick)
            if edit is not None:
                edit(get, b)
            sw = build(b, metrics=["sim_time_ps", "throughput_GBps", "outcome"], name=name)
            for p in sw.points:
                p.labels = {"get": get, "object_bytes": size}
            points += sw.points
    return Sweep(name, points)


def analyze(df: pd.DataFrame) -> pd.DataFrame:
    """GETs per second and Gb/s of items, from the operations a GET makes."""
    d = df.copy()
    ops = [system.reads_per_get(g, int(s)) for g, s in zip(d["get"], d["object_bytes"])]
    d["gets_mops"] = d["throughput_GBps"] * 1e9 / 64 / ops / 1e6
    d["get_gbps"] = d["gets_mops"] * 1e6 * d["object_bytes"] * 8 / 1e9
    d = d.sort_values(["get", "object_bytes"])
    return d[["get", "object_bytes", "gets_mops", "get_gbps"]].reset_index(drop=True)


def plot(data: pd.DataFrame, fig, labels: dict[str, str], title: str) -> None:
    ax = fig.add_subplot(1, 1, 1)
    for g, label in labels.items():
        d = data[data["get"] == g]
        ax.plot(d["object_bytes"], d["get_gbps"], marker="o", label=label)
    ax.set_xscale("log", base=2)
    ax.set_xlabel("item size (bytes)")
    ax.set_ylabel("GET throughput (Gb/s of items)")
    ax.grid(True, alpha=0.3)
    figure_legend(fig)
    fig.suptitle(title)


def by_size(data: pd.DataFrame, gets: list[str]) -> dict[str, dict[int, float]]:
    """Gb/s of items per GET protocol and item size."""
    return {g: dict(zip(data[data["get"] == g]["object_bytes"], data[data["get"] == g]["get_gbps"])) for g in gets}
