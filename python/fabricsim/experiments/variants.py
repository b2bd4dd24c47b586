"""Changes to an experiment's modelled system: reproduction mutants, modelling
alternatives, and the user's ``--set`` overrides.

A :class:`Variant` transforms the points of an experiment's sweep: it sets
configuration keys (on every point, or on the points whose labels it
selects), edits the configuration structurally (add a link, swap a
topology), or reads a different column of the analysed data. Points it
leaves alone keep their keys, so the store reuses their results.

- A :class:`Mutant` breaks the mechanism a figure is about; the tests run it
  and check that the rows it names turn to *disagrees*.
- A :class:`Choice` is a modelling choice the paper does not make, with the
  alternatives the report re-runs to show whether each verdict survives.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Callable

from .. import _core
from .._config import ConfigError
from ..sweeps import Point, Sweep


@dataclass
class Variant:
    name: str
    description: str
    #: configuration keys to set (``--set`` syntax: ``"fabric.buffer": "64KiB"``)
    set: dict[str, Any] = field(default_factory=dict)
    #: point labels -> whether the variant applies to this point (default: every point)
    when: Callable[[Mapping[str, Any]], bool] | None = None
    #: (configuration dict, point labels) -> None, editing the configuration in place
    edit: Callable[[dict, Mapping[str, Any]], None] | None = None
    #: analysis: column to read instead of another ({"bus_utility": "bus_utility_directions"})
    columns: dict[str, str] = field(default_factory=dict)
    #: point labels -> keys to set on that point (for values that depend on the point)
    set_per_point: Callable[[Mapping[str, Any]], dict[str, Any]] | None = None

    def apply(self, sweep: Sweep) -> Sweep:
        """The sweep with this variant applied, validated point by point."""
        if not (self.set or self.edit or self.set_per_point):
            return sweep
        points = [self._point(p) for p in sweep.points]
        _validate(points, f"variant {self.name!r}")
        return Sweep(sweep.name, points)

    def _point(self, p: Point) -> Point:
        if self.when is not None and not self.when(p.labels):
            return p
        params = {**p.params, **self.set}
        if self.set_per_point is not None:
            params.update(self.set_per_point(p.labels))
        text, fmt = p.text, p.fmt
        if self.edit is not None:
            cfg = _parse(p.text, p.fmt)
            self.edit(cfg, p.labels)
            text, fmt = json.dumps(cfg), "json"
        return dataclasses.replace(p, text=text, fmt=fmt, params=params)

    def remap(self, data):
        """The analysed data with this variant's column substitutions."""
        if not self.columns:
            return data
        d = data.copy()
        for dst, src in self.columns.items():
            d[dst] = d[src]
        return d


@dataclass
class Mutant(Variant):
    """A change that breaks the figure's mechanism; ``flips`` names the rows (by metric) that must then
    disagree."""

    flips: list[str] = field(default_factory=list)


@dataclass
class Choice:
    """A modelling choice the paper does not make: ours, and the alternatives to test it against."""

    name: str
    ours: str
    alternatives: list[Variant]


def _parse(text: str, fmt: str) -> dict:
    if fmt == "json":
        return json.loads(text)
    try:
        import tomllib
    except ModuleNotFoundError:  # pragma: no cover - Python < 3.11
        import tomli as tomllib  # type: ignore[no-redef]
    return tomllib.loads(text)


def _validate(points: list[Point], what: str) -> None:
    seen: set[tuple[str, str]] = set()
    for p in points:
        if p.runner:  # a checking point: its runner reads its own specification
            continue
        sig = (p.text, json.dumps(p.params, sort_keys=True))
        if sig in seen:
            continue
        seen.add(sig)
        try:
            _core.validate(p.text, p.source, fmt=p.fmt, overrides=p.overrides)
        except _core.ConfigError as exc:
            raise ConfigError(f"{what}: point {p.labels or p.params}: {exc}") from None


# ---------------------------------------------------------------- --set on reproduce


def parse_overrides(overrides: list[str]) -> dict[str, Any]:
    """``KEY=VALUE`` strings as a dict; values parse as TOML values, else stay strings (like ``run --set``)."""
    try:
        import tomllib
    except ModuleNotFoundError:  # pragma: no cover
        import tomli as tomllib  # type: ignore[no-redef]
    out: dict[str, Any] = {}
    for o in overrides:
        key, eq, value = o.partition("=")
        key = key.strip()
        if not eq or not key:
            raise ConfigError(f"--set {o}: expected KEY=VALUE")
        try:
            v = tomllib.loads(f"v = {value}")["v"]
        except tomllib.TOMLDecodeError:
            v = value
        if not isinstance(v, (bool, int, float, str, list)):
            raise ConfigError(f"--set {o}: expected a number, string, boolean or list value")
        out[key] = v
    return out


def sensitivity(overrides: list[str]) -> Variant | None:
    """The user's ``--set`` overrides as a variant applied to every run, or None."""
    if not overrides:
        return None
    return Variant("--set", " ".join(f"--set {o}" for o in overrides), set=parse_overrides(overrides))


def check_sensitivity(variant: Variant, sweeps: list[tuple[str, Sweep]]) -> list[tuple[str, Sweep]]:
    """Apply the ``--set`` overrides to every run of every selected experiment.

    Each run validates them like ``fabricsim run --set``; the first failure is an error naming the key,
    the experiment and the run, and a key that no run accepts says so."""
    out = []
    failures: list[tuple[str, str]] = []
    total = 0
    for exp_id, sw in sweeps:
        varied = sorted({k for p in sw.points for k in p.params} & set(variant.set))
        if varied:
            raise ConfigError(
                f"--set {varied[0]}: {exp_id} varies this key in its sweep; a sensitivity run cannot fix it "
                "(choose another key, or the figures that do not vary it)"
            )
        points = []
        for p in sw.points:
            q = variant._point(p)
            total += 1
            try:
                _core.validate(q.text, q.source, fmt=q.fmt, overrides=q.overrides)
            except _core.ConfigError as exc:
                failures.append((f"{exp_id} {p.labels or p.params}", str(exc)))
            points.append(q)
        out.append((exp_id, Sweep(sw.name, points)))
    if failures:
        keys = ", ".join(variant.set)
        where, msg = failures[0]
        if len(failures) == total:
            raise ConfigError(f"--set {keys}: no run of the selected experiments accepts it; first: {where}: {msg}")
        raise ConfigError(f"--set {keys}: {len(failures)} of {total} runs reject it; first: {where}: {msg}")
    return out
