"""Named suites of long checks (``fabricsim check --suite NAME``).

A suite is a folder of ``python/fabricsim/suites/`` with a ``suite.toml`` that lists its
entries: ``[[check]]`` runs a check configuration of the folder (``[protocol]``, ``[check]``), ``[[litmus]]`` a litmus
test on a protocol (``protocol``, its ``[protocol.<name>]`` keys as the table ``set`` and ``mutant``,
as ``fabricsim litmus --protocol --set --mutant`` take them). An entry may state the counts a
complete search reached before (``states``, ``transitions``, ``depth``): a run that differs is
reported, since the same configuration must always reach the same states. Entries without counts
have not yet been run to the end.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from ._config import ConfigError

try:
    import tomllib  # Python >= 3.11
except ModuleNotFoundError:  # pragma: no cover - older Pythons
    import tomli as tomllib  # type: ignore[no-redef]

SUITES_DIR = Path(__file__).parent / "suites"
_KINDS = ("check", "litmus")
_COUNTS = ("states", "transitions", "depth")
_KEYS = {
    "check": {"name", "config", "note", *_COUNTS},
    "litmus": {"name", "file", "model", "protocol", "set", "mutant", "note", *_COUNTS},
}


@dataclass
class Entry:
    kind: str
    name: str
    path: Path
    expected: dict[str, int]
    note: str = ""
    model: str = ""
    protocol: str = ""
    extra: dict[str, Any] = field(default_factory=dict)


def names() -> list[str]:
    return sorted(p.name for p in SUITES_DIR.iterdir() if (p / "suite.toml").is_file())


def load(name: str) -> list[Entry]:
    folder = SUITES_DIR / name
    manifest = folder / "suite.toml"
    if not manifest.is_file():
        raise ConfigError(f"--suite {name!r}: no such suite; expected one of {', '.join(names())}")
    table = tomllib.loads(manifest.read_text())
    entries = []
    for kind, items in table.items():
        if kind not in _KINDS:
            raise ConfigError(f"{manifest}: unknown table [[{kind}]]; expected [[check]] or [[litmus]]")
        for i, item in enumerate(items):
            where = f"{manifest}: {kind}[{i}]"
            unknown = set(item) - _KEYS[kind]
            if unknown:
                raise ConfigError(f"{where}: unknown key {sorted(unknown)[0]!r}; expected {sorted(_KEYS[kind])}")
            ref = item.get("config" if kind == "check" else "file")
            if not ref or not (folder / ref).is_file():
                raise ConfigError(f"{where}: {ref!r}: no such file in {folder}")
            entries.append(
                Entry(
                    kind=kind,
                    name=item.get("name", Path(ref).stem),
                    path=folder / ref,
                    expected={k: item[k] for k in _COUNTS if k in item},
                    note=item.get("note", ""),
                    model=item.get("model", ""),
                    protocol=item.get("protocol", ""),
                    extra={"set": item.get("set", {}), "mutant": item.get("mutant")},
                )
            )
    return entries


def run(
    name: str,
    *,
    only: list[str] | None = None,
    disk: str | None = None,
    overrides: list[str] | None = None,
    progress: bool = False,
    out: Callable[[str], None] = print,
) -> list[dict[str, Any]]:
    """Run a suite's entries (or those named in ``only``); one result per entry, with
    ``status`` one of ok, differs (counts unlike the recorded ones), incomplete, violation."""
    from . import check as run_check
    from . import litmus as run_litmus

    entries = load(name)
    if only:
        missing = sorted(set(only) - {e.name for e in entries})
        if missing:
            raise ConfigError(
                f"--only {missing[0]!r}: not in suite {name!r}; expected one of {[e.name for e in entries]}"
            )
        entries = [e for e in entries if e.name in only]
    results = []
    for e in entries:
        t0 = time.monotonic()
        if e.kind == "check":
            sets = list(overrides or [])
            if disk is not None:
                sets.append(f"check.disk={json.dumps(str(Path(disk) / e.name))}")
            r = run_check(e.path, set=sets, progress=progress)
            got = {k: r[k] for k in _COUNTS}
            complete, ok = r["complete"], r["ok"]
            memory: float | None = r["peak_rss_kb"] / 1024
        else:
            r = run_litmus(e.path, model=e.model, protocol=e.protocol, set=e.extra["set"], mutant=e.extra["mutant"])
            got = {"states": r["states"]}
            complete, ok = True, r["ok"]
            memory = None
        seconds = time.monotonic() - t0
        differs = {k: (v, got.get(k)) for k, v in e.expected.items() if got.get(k) != v}
        if not ok:
            status = "violation"
        elif not complete:
            status = "incomplete"
        elif differs:
            status = "differs"
        else:
            status = "ok"
        line = f"{e.name:<14} {status:<10} {got['states']:>13,} states"
        if "depth" in got:
            line += f", depth {got['depth']}"
        line += f", {seconds:,.0f} s"
        if memory is not None:
            line += f", {memory:,.0f} MiB"
        if not e.expected and status == "ok":
            line += " (no recorded counts)"
        for k, (want, have) in differs.items():
            line += f"\n    {k}: {have} where {want} was recorded"
        out(line)
        results.append({"name": e.name, "status": status, **got, "seconds": seconds, "expected": e.expected})
    return results
