"""Drawing the paper's values on fabricsim's plots, the same way in every figure.

Paper values are dashed lines (a series) or black-edged hollow markers (a
point), labelled with their source kind ("paper (text)", "paper (bound)"),
so a reader never mistakes them for simulated data.
"""

from __future__ import annotations

from collections.abc import Sequence

PAPER_STYLE = {"linestyle": "--", "linewidth": 1.2, "alpha": 0.8}


def paper_line(ax, xs: Sequence, ys: Sequence[float], kind: str, label: str | None = None, **kw) -> None:
    """A paper series (a statement or limit over x) as a dashed line."""
    ax.plot(list(xs), list(ys), label=label or f"paper ({kind})", **{**PAPER_STYLE, **kw})


def paper_point(ax, x, y: float, kind: str, label: str | None = None, **kw) -> None:
    """One paper value as a large hollow marker."""
    style = {
        "marker": "o",
        "markersize": 11,
        "markerfacecolor": "none",
        "markeredgecolor": "black",
        "markeredgewidth": 1.5,
        "linestyle": "none",
    }
    ax.plot([x], [y], label=label or f"paper ({kind})", **{**style, **kw})


def paper_hline(ax, y: float, kind: str, label: str | None = None, **kw) -> None:
    """A paper value that holds at every x (such as 'stays constant at 1')."""
    ax.axhline(y, label=label or f"paper ({kind})", color=kw.pop("color", "black"), **{**PAPER_STYLE, **kw})


def dedupe_legend(ax, **kw):
    """A legend with one entry per label."""
    handles, labels = ax.get_legend_handles_labels()
    seen: dict[str, object] = {}
    for h, lab in zip(handles, labels):
        seen.setdefault(lab, h)
    return ax.legend(list(seen.values()), list(seen), **kw)


def figure_legend(fig, **kw):
    """One legend for the whole figure, outside the panels on the right (the report draws figures with
    constrained layout), so it never covers data or fills an empty panel."""
    seen: dict[str, object] = {}
    for ax in fig.axes:
        for h, lab in zip(*ax.get_legend_handles_labels()):
            seen.setdefault(lab, h)
    return fig.legend(list(seen.values()), list(seen), loc="outside right upper", fontsize="small", **kw)
