"""The sweep store: one SQLite database, one row per finished point.

Each point is written in a single transaction, so a sweep killed at any moment
(even ``kill -9``) loses no finished point and never leaves a partial one.
A point's key is a hash of everything that decides its result (the base
configuration text, the overrides, the seed and the fabricsim version), so a
re-run skips points already stored and an upgrade of fabricsim recomputes.
"""

from __future__ import annotations

import json
import os
import sqlite3
import urllib.parse
from collections.abc import Iterable
from typing import Any

SCHEMA = """
CREATE TABLE IF NOT EXISTS points (
    key      TEXT PRIMARY KEY,   -- configuration hash (base text, overrides, seed, version)
    sweep    TEXT NOT NULL,      -- name of the sweep that asked for it
    params   TEXT NOT NULL,      -- JSON object: the overrides that define the point
    seed     INTEGER NOT NULL,
    status   TEXT NOT NULL,      -- 'ok' or 'error'
    metrics  TEXT,               -- JSON object of the kept metrics ('ok' only)
    error    TEXT,               -- the error message ('error' only)
    wall_s   REAL NOT NULL,
    version  TEXT NOT NULL
);
"""


COLUMNS = ("key", "sweep", "params", "seed", "status", "metrics", "error", "wall_s", "version")


def _bad_store(path: str, why: str) -> Exception:
    from ._core import ConfigError

    return ConfigError(f"{path}: {why}; expected a sweep store written by `fabricsim sweep` (a SQLite file)")


class Store:
    """A handle on a sweep database. Only the process that runs the sweep writes to it.

    ``readonly=True`` (``fabricsim results``, :func:`load`) never creates or changes anything.
    A path that is a directory, not SQLite, or a SQLite database of something else (no
    ``points`` table, or one with other columns) is refused with a ConfigError naming it."""

    def __init__(self, path: str | os.PathLike, readonly: bool = False):
        self.path = os.fspath(path)
        if os.path.isdir(self.path):
            raise _bad_store(self.path, "is a directory")
        if readonly:
            if not os.path.exists(self.path):
                raise _bad_store(self.path, "no such file")
            if os.path.getsize(self.path) == 0:
                raise _bad_store(self.path, "empty file (0 bytes)")
        else:
            parent = os.path.dirname(os.path.abspath(self.path))
            os.makedirs(parent, exist_ok=True)
        try:
            if readonly:
                uri = "file:" + urllib.parse.quote(os.path.abspath(self.path)) + "?mode=ro"
                self.conn = sqlite3.connect(uri, uri=True, timeout=60)
            else:
                self.conn = sqlite3.connect(self.path, timeout=60)
            tables = {name for (name,) in self.conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
            if "points" in tables:
                cols = tuple(row[1] for row in self.conn.execute("PRAGMA table_info(points)"))
                if cols != COLUMNS:
                    raise _bad_store(self.path, f"its `points` table has columns {', '.join(cols)}")
            elif tables or readonly:
                what = f"a SQLite database with tables {', '.join(sorted(tables))}" if tables else "no `points` table"
                raise _bad_store(self.path, f"{what} but no sweep points")
            if not readonly:
                self.conn.execute("PRAGMA journal_mode=WAL")
                self.conn.execute("PRAGMA synchronous=FULL")
                self.conn.executescript(SCHEMA)
        except sqlite3.DatabaseError as exc:
            conn = getattr(self, "conn", None)
            if conn is not None:
                conn.close()
            raise _bad_store(self.path, f"not a usable SQLite database ({exc})") from None

    def close(self) -> None:
        self.conn.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def done_keys(self) -> dict[str, str]:
        """Stored keys and their status."""
        return dict(self.conn.execute("SELECT key, status FROM points"))

    def put(self, row: dict[str, Any]) -> None:
        """Store one finished point, in one transaction."""
        with self.conn:
            self.conn.execute(
                "INSERT OR REPLACE INTO points"
                " (key, sweep, params, seed, status, metrics, error, wall_s, version)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    row["key"],
                    row["sweep"],
                    json.dumps(row["params"], sort_keys=True),
                    row["seed"],
                    row["status"],
                    json.dumps(row["metrics"], sort_keys=True) if row.get("metrics") is not None else None,
                    row.get("error"),
                    row["wall_s"],
                    row["version"],
                ),
            )

    def rows(self, keys: Iterable[str] | None = None, sweep: str | None = None) -> list[dict[str, Any]]:
        query = "SELECT key, sweep, params, seed, status, metrics, error, wall_s, version FROM points"
        args: list[Any] = []
        if sweep is not None:
            query += " WHERE sweep = ?"
            args.append(sweep)
        query += " ORDER BY rowid"
        wanted = set(keys) if keys is not None else None
        out = []
        for key, sw, params, seed, status, metrics, error, wall_s, version in self.conn.execute(query, args):
            if wanted is not None and key not in wanted:
                continue
            out.append(
                {
                    "key": key,
                    "sweep": sw,
                    "params": json.loads(params),
                    "seed": seed,
                    "status": status,
                    "metrics": json.loads(metrics) if metrics else {},
                    "error": error,
                    "wall_s": wall_s,
                    "version": version,
                }
            )
        return out


#: Units a parameter's text may carry, to the number beside it in base units (bytes, seconds,
#: bytes per second, hertz): ``"32KiB"`` is 32768 in ``<name> [B]``, so sizes sort as numbers.
_UNITS: dict[str, tuple[str, float]] = {
    "B": ("B", 1),
    "KB": ("B", 1e3),
    "MB": ("B", 1e6),
    "GB": ("B", 1e9),
    "TB": ("B", 1e12),
    "KiB": ("B", 2**10),
    "MiB": ("B", 2**20),
    "GiB": ("B", 2**30),
    "TiB": ("B", 2**40),
    "ps": ("s", 1e-12),
    "ns": ("s", 1e-9),
    "us": ("s", 1e-6),
    "ms": ("s", 1e-3),
    "s": ("s", 1),
    "B/s": ("B/s", 1),
    "KB/s": ("B/s", 1e3),
    "MB/s": ("B/s", 1e6),
    "GB/s": ("B/s", 1e9),
    "TB/s": ("B/s", 1e12),
    "MHz": ("Hz", 1e6),
    "GHz": ("Hz", 1e9),
}


def unit_value(text: Any) -> tuple[float, str] | None:
    """``"32KiB"`` -> ``(32768.0, "B")``; None for anything that is not a number with a unit."""
    import re

    if not isinstance(text, str):
        return None
    m = re.fullmatch(r"\s*([0-9]+(?:\.[0-9]*)?(?:[eE][-+]?[0-9]+)?)\s*([A-Za-z/]+)\s*", text)
    if not m or m.group(2) not in _UNITS:
        return None
    base, factor = _UNITS[m.group(2)]
    return float(m.group(1)) * factor, base


def frame(rows: list[dict[str, Any]]):
    """Rows as a pandas DataFrame: the sweep and seed, one column per parameter (a parameter
    given with units also as a number in base units, ``<name> [B]``), one per metric, then the
    status, error, wall time, version and the point's key."""
    import pandas as pd

    records = []
    params: dict[str, dict[str, None]] = {}  # a parameter -> its number-with-units columns
    metrics: dict[str, None] = {}
    for r in rows:
        rec: dict[str, Any] = {"sweep": r["sweep"], "seed": r["seed"]}
        for k, v in r["params"].items():
            units = params.setdefault(k, {})
            rec[k] = v
            u = unit_value(v)
            if u is not None:
                rec[f"{k} [{u[1]}]"] = u[0]
                units.setdefault(f"{k} [{u[1]}]")
        for k, v in (r["metrics"] or {}).items():
            metrics.setdefault(k)
            rec[k] = v
        rec.update(status=r["status"], error=r["error"], wall_s=r["wall_s"], version=r["version"], key=r["key"])
        records.append(rec)
    df = pd.DataFrame.from_records(records)
    order = ["sweep", "seed"]
    for p in sorted(params):
        order += [p, *params[p]]
    order += [m for m in metrics if m not in order]
    order += ["status", "error", "wall_s", "version", "key"]
    return df[[c for c in order if c in df.columns]]


def load(path: str | os.PathLike, sweep: str | None = None):
    """All points of a sweep database (or of one sweep in it) as a pandas DataFrame."""
    if not os.path.exists(path):
        raise FileNotFoundError(f"{os.fspath(path)}: no such sweep database")
    with Store(path, readonly=True) as s:
        try:
            return frame(s.rows(sweep=sweep))
        except (sqlite3.DatabaseError, ValueError) as exc:
            raise _bad_store(s.path, f"damaged ({exc})") from None
