"""Reproductions of the seed papers' figures and tables.

One module per figure under ``fabricsim/experiments/<seed>/``, each defining
``EXPERIMENT``: the sweep it runs (full and ``quick``), how the plotted data
come from the stored points, the plot, the report rows (each with the
paper's value and its source, a tolerance or a predicate computed on the
simulated data, and an explanation: :mod:`.verdicts`), the reproduction
mutants that must turn rows to "disagrees", and the modelling choices the
report re-runs with alternatives (:mod:`.variants`). The paper's values are
never an output: every plotted number comes from a simulation. How to write
one: ``docs/reproductions.md``.
"""

from __future__ import annotations

import importlib
import pkgutil
from dataclasses import dataclass, field
from typing import Any, Callable

from .variants import Choice, Mutant, Variant
from .verdicts import Row

SEEDS = {
    "bi": "BI: sharing non-cache-coherent memory between coherence domains with bounded incoherence (Ren et al.)",
    "cord": "CORD: directory-ordered release consistency for multi-PU write-through coherence (Yu et al.)",
    "esf": "ESF: an extensible simulation framework for CXL-enabled systems (An et al.)",
    "rlsq": "RLSQ: fast remote memory ordering for PCIe, the root complex's remote load-store queue",
    "gcs": "GCS: generalized cache coherence for reader-writer synchronization on disaggregated memory",
}


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
    #: plotted data -> report rows
    compare: Callable[[Any], list[Row]]
    #: modelling choices, and any parameter tuned for this figure (with why)
    notes: str = ""
    #: changes that break the figure's mechanism, with the rows each must turn to "disagrees"
    mutants: list[Mutant] = field(default_factory=list)
    #: modelling choices the paper does not make, with alternatives the report re-runs
    choices: list[Choice] = field(default_factory=list)
    #: when ``choices`` is empty: why the figure has no modelling choice worth an alternative
    no_choices_because: str = ""
    tags: list[str] = field(default_factory=list)

    def rows(self, quick: bool, db, variant: Variant | None = None, **run) -> list[Row]:
        """Run the sweep (with ``variant`` applied) and return the report rows."""
        from ..report import run_experiment

        data = run_experiment(self, quick, db, variant=variant, **run)
        return self.compare(variant.remap(data) if variant else data)

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


def not_reproduced(exps: list[Experiment]) -> list[tuple[str, str]]:
    """(item, why) of the results each selected seed's paper has that fabricsim does not reproduce."""
    items = []
    for seed in dict.fromkeys(e.seed for e in exps):
        try:
            mod = importlib.import_module(f"{__name__}.{seed}")
        except ModuleNotFoundError:  # an experiment defined outside the package (a user's, a test's)
            continue
        items += getattr(mod, "NOT_REPRODUCED", [])
    return items


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
