"""Reproductions of the seed papers' figures and tables.

One module per figure under ``fabricsim/experiments/<seed>/``, each defining
``EXPERIMENT``: the sweep it runs (full and ``quick``), how the plotted metric
is computed from the stored points, the plot, and the paper's values as a
reference column with the tolerance and the reason for any disagreement.
The paper's values are never an output: every plotted number comes from a
simulation.
"""

from __future__ import annotations

import importlib
import pkgutil
from dataclasses import dataclass, field
from typing import Any, Callable

SEEDS = {
    "esf": "ESF: an extensible simulation framework for CXL-enabled systems (An et al.)",
}


@dataclass
class Comparison:
    """One row of a reproduction report."""

    figure: str
    metric: str
    paper: float | None
    fabricsim: float
    tolerance: float = 0.10
    same_trend: bool = False
    explanation: str = ""

    @property
    def ratio(self) -> float | None:
        if self.paper in (None, 0):
            return None
        return self.fabricsim / self.paper

    @property
    def verdict(self) -> str:
        r = self.ratio
        if r is not None and abs(r - 1.0) <= self.tolerance:
            return "within tolerance"
        if self.same_trend:
            return "same trend"
        return "disagrees"


@dataclass
class Experiment:
    seed: str
    figure: str
    title: str
    #: quick -> the sweep (fabricsim.sweep.Sweep)
    sweep: Callable[[bool], Any]
    #: stored points (DataFrame) -> the plotted data (DataFrame)
    analyze: Callable[[Any], Any]
    #: (plotted data, matplotlib Figure) -> None
    plot: Callable[[Any, Any], None]
    #: plotted data -> comparison rows
    compare: Callable[[Any], list[Comparison]]
    #: modelling choices, and any parameter tuned for this figure (with why)
    notes: str = ""
    tags: list[str] = field(default_factory=list)

    @property
    def id(self) -> str:
        return f"{self.seed}/{self.figure}"


def discover() -> list[Experiment]:
    """Every experiment, in seed then figure order."""
    found = []
    for seed in sorted(SEEDS):
        pkg = importlib.import_module(f"{__name__}.{seed}")
        for info in sorted(pkgutil.iter_modules(pkg.__path__), key=lambda m: _natural(m.name)):
            mod = importlib.import_module(f"{pkg.__name__}.{info.name}")
            exp = getattr(mod, "EXPERIMENT", None)
            if exp is not None:
                found.append(exp)
    return found


def _natural(name: str) -> tuple:
    import re

    return tuple(int(t) if t.isdigit() else t for t in re.split(r"(\d+)", name))


def select(names: list[str], everything: bool = False) -> list[Experiment]:
    """Experiments named by seed (``esf``), figure (``fig10``, ``esf/fig10``), or all."""
    all_exps = discover()
    if everything or not names:
        return all_exps
    chosen = []
    for n in names:
        n = n.lower()
        hits = [e for e in all_exps if n in (e.seed, e.figure, e.id)]
        if not hits:
            known = ", ".join([*SEEDS, *(e.id for e in all_exps)])
            from .._core import ConfigError

            raise ConfigError(f"{n!r}: no such seed or figure; expected one of {known}")
        chosen += [e for e in hits if e not in chosen]
    return chosen
