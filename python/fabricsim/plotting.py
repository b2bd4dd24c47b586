"""The common x-y plot of a sweep: one metric against one parameter, one line per value of
another parameter (``fabricsim plot DB --x ... --y ... [--by ...]`` or :func:`plot`).

A column given with units (``"32KiB"``, ``"PCIe5x16"`` is not one) is plotted by its number in
base units (the store's ``<name> [B]`` column), so sizes and times sort as numbers.
"""

from __future__ import annotations

import difflib
import os
from typing import Any

# an axis in base units reads better in the unit people write it in
_SCALES = {
    "B": [(2**30, "GiB"), (2**20, "MiB"), (2**10, "KiB"), (1, "B")],
    "s": [(1, "s"), (1e-3, "ms"), (1e-6, "us"), (1e-9, "ns"), (1e-12, "ps")],
    "B/s": [(1e9, "GB/s"), (1e6, "MB/s"), (1e3, "kB/s"), (1, "B/s")],
    "b/s": [(1e9, "Gb/s"), (1e6, "Mb/s"), (1, "b/s")],
    "Hz": [(1e9, "GHz"), (1e6, "MHz"), (1, "Hz")],
}


class PlotError(ValueError):
    """A column that is not in the results, or one that cannot be plotted."""


def _column(df, name: str, what: str) -> str:
    """The column to plot for ``name``: its numeric ``name [unit]`` twin when it has one."""
    if name not in df.columns:
        close = difflib.get_close_matches(name, [str(c) for c in df.columns], n=3, cutoff=0.5)
        hint = f"; did you mean {' or '.join(repr(c) for c in close)}?" if close else ""
        cols = ", ".join(str(c) for c in df.columns if c not in ("key", "version", "error"))
        raise PlotError(f"{what} {name!r}: no such column{hint} (columns: {cols})")
    for c in df.columns:
        if isinstance(c, str) and c.startswith(f"{name} [") and c.endswith("]"):
            return c
    return name


def _numeric(values) -> bool:
    try:
        values.astype(float)
    except (TypeError, ValueError):
        return False
    return True


def _scaled(df, col: str) -> tuple[Any, str]:
    """The column's values and axis label, in the largest unit that keeps them >= 1."""
    values = df[col]
    if not (col.endswith("]") and " [" in col):
        return values, col
    name, unit = col[:-1].rsplit(" [", 1)
    scales = _SCALES.get(unit)
    if not scales:
        return values, col
    low = values[values > 0].min() if (values > 0).any() else 1
    for factor, label in scales:
        if low >= factor:
            return values / factor, f"{name} [{label}]"
    factor, label = scales[-1]
    return values / factor, f"{name} [{label}]"


def plot(
    results: Any,
    x: str,
    y: str,
    by: str | None = None,
    sweep: str | None = None,
    ax: Any = None,
    logx: bool = False,
    logy: bool = False,
):
    """Plot metric ``y`` against parameter ``x`` from a sweep's results (a DataFrame from
    :func:`fabricsim.load`, or the path of a sweep store), one line per value of ``by``,
    averaged over seeds. Failed points are left out. Returns the matplotlib Axes."""
    import matplotlib

    if ax is None:
        matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    if isinstance(results, (str, os.PathLike)):
        from .store import load

        results = load(results, sweep=sweep)
    elif sweep is not None:
        results = results[results["sweep"] == sweep]
    df = results
    if "status" in df.columns:
        df = df[df["status"] == "ok"]
    if df.empty:
        raise PlotError("no successful points to plot")
    xc, yc = _column(df, x, "--x"), _column(df, y, "--y")
    if by is None:
        groups = [(None, df)]
    else:
        bc = _column(df, by, "--by")
        # a parameter with units: ordered by its number, each line labelled by its text
        groups = [(g[by].iloc[0], g) for _, g in df.groupby(bc, sort=True)]
    if not _numeric(df[yc]):
        raise PlotError(f"--y {y!r} is not numeric (values such as {df[yc].iloc[0]!r})")
    # a parameter without numbers (a link generation, a protocol variant) is a category axis,
    # in the order the sweep gives its values
    categories = None if _numeric(df[xc]) else list(dict.fromkeys(df[xc]))
    if ax is None:
        _, ax = plt.subplots(figsize=(6, 4))
    for value, g in groups:
        mean = g.groupby(xc, sort=categories is None)[yc].mean().reset_index()
        if categories is None:
            xs, xlabel = _scaled(mean, xc)
        else:
            xs, xlabel = [categories.index(v) for v in mean[xc]], xc
        ys, ylabel = _scaled(mean, yc)
        ax.plot(xs, ys, marker="o", label=None if by is None else f"{by} = {value}")
    if categories is not None:
        ax.set_xticks(range(len(categories)), [str(c) for c in categories])
        logx = False
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    if logx:
        ax.set_xscale("log", base=2)
    if logy:
        ax.set_yscale("log")
    if by is not None:
        ax.legend(fontsize="small")
    if "sweep" in df.columns and not ax.get_title():
        ax.set_title(", ".join(str(v) for v in dict.fromkeys(df["sweep"])))
    ax.grid(True, alpha=0.3)
    return ax
