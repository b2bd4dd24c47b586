"""The result of one simulation: summary, tables as pandas DataFrames, and output files."""

from __future__ import annotations

import io
import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pandas is imported only when a table is asked for
    import pandas

#: Summary keys that measure the host machine rather than the simulation. They are kept out of
#: summary.json (so that the same configuration and seed give identical files) and written to
#: timing.json instead.
TIMING_KEYS = ("wall_s",)


class Result:
    """What :func:`fabricsim.run` returns.

    ``summary`` is the run's summary as a dict; ``links``, ``latency``, ``requesters``,
    ``classes`` and ``memories`` are its tables as pandas DataFrames; ``text`` is the table printed on a terminal.
    """

    def __init__(self, raw: Mapping[str, Any]):
        self._summary_text: str = raw["summary"]
        self._tables: dict[str, str] = dict(raw.get("tables", {}))
        self._text: str = raw.get("text", "")
        self._summary: dict[str, Any] | None = None
        self._frames: dict[str, pandas.DataFrame] = {}

    # -- summary ---------------------------------------------------------------------------
    @property
    def summary(self) -> dict[str, Any]:
        """The summary as a dict (a fresh copy each time, so callers may change it)."""
        if self._summary is None:
            self._summary = json.loads(self._summary_text)
        return json.loads(json.dumps(self._summary))

    @property
    def warnings(self) -> list[str]:
        """What the run warns about: the configuration's slips (a cache size in decimal units),
        a time limit or deadlock reached, an interruption."""
        return list(self.summary.get("warnings", []))

    @property
    def summary_json(self) -> str:
        """The summary exactly as the core wrote it (includes wall-clock timing)."""
        return self._summary_text

    @property
    def text(self) -> str:
        """A human-readable summary table for a terminal."""
        return self._text

    # -- tables ----------------------------------------------------------------------------
    @property
    def table_names(self) -> list[str]:
        return list(self._tables)

    def csv(self, name: str) -> str:
        """The CSV text of one table, exactly as the core wrote it."""
        try:
            return self._tables[name]
        except KeyError:
            known = ", ".join(self._tables) or "none"
            raise KeyError(f"no table {name!r} in this result (tables: {known})") from None

    def table(self, name: str) -> pandas.DataFrame:
        """One table as a pandas DataFrame."""
        import pandas

        if name not in self._frames:
            text = self.csv(name)
            if text.strip():
                frame = pandas.read_csv(io.StringIO(text))
            else:
                frame = pandas.DataFrame()
            self._frames[name] = frame
        return self._frames[name].copy()

    @property
    def links(self) -> pandas.DataFrame:
        """Per-link, per-direction utilisation and traffic."""
        return self.table("links")

    @property
    def latency(self) -> pandas.DataFrame:
        """Latency histogram (log buckets)."""
        return self.table("latency")

    @property
    def requesters(self) -> pandas.DataFrame:
        """Per-requester requests, throughput and latency."""
        return self.table("requesters")

    @property
    def classes(self) -> pandas.DataFrame:
        """Traffic by message class."""
        return self.table("classes")

    @property
    def hops(self) -> pandas.DataFrame:
        """Measured requests by hop count (links on the request's route): latency and its parts
        waited in fabric queues and in memory queues. Request/response systems only; empty for
        protocol runs."""
        import pandas

        return self.table("hops") if "hops" in self._tables else pandas.DataFrame()

    @property
    def caches(self) -> pandas.DataFrame:
        """Per core and cache (``[protocol.core]`` levels ``l1``, ``l2``, then ``protocol``): hits,
        misses, capacity and coherence misses, evictions, write-backs, MSHR stalls and their time,
        the L1's late overruns (a counter a row does not have is NaN; docs/core.md, "Counters").
        Protocol runs with levels, or whose protocol's cache counts (MSI, MESI, DCOH with a
        capacity), only; empty otherwise."""
        import pandas

        return self.table("caches") if "caches" in self._tables else pandas.DataFrame()

    @property
    def memories(self) -> pandas.DataFrame:
        """Per memory (a protocol's homes): accesses served, utilization and DRAM counters."""
        return self.table("memories")

    # -- output ----------------------------------------------------------------------------
    def deterministic_summary(self) -> dict[str, Any]:
        """The summary without wall-clock keys: identical for identical configuration and seed."""
        summary = self.summary
        for key in TIMING_KEYS:
            summary.pop(key, None)
        return summary

    def timing(self) -> dict[str, Any]:
        summary = self.summary
        return {key: summary[key] for key in TIMING_KEYS if key in summary}

    def write(self, out_dir: str | os.PathLike[str]) -> Path:
        """Write ``summary.json``, ``timing.json`` and one ``<table>.csv`` per table.

        Every file except ``timing.json`` depends only on the configuration and seed.
        Returns the output directory.
        """
        out = Path(out_dir)
        out.mkdir(parents=True, exist_ok=True)
        files = {
            "summary.json": json.dumps(self.deterministic_summary(), indent=2, sort_keys=True) + "\n",
            "timing.json": json.dumps(self.timing(), indent=2, sort_keys=True) + "\n",
        }
        for name, text in self._tables.items():
            files[f"{name}.csv"] = text
        for filename, text in files.items():
            # newline="" writes the text byte for byte on every platform
            with open(out / filename, "w", encoding="utf-8", newline="") as f:
                f.write(text)
        return out

    def __repr__(self) -> str:
        try:
            s = self.summary
        except ValueError:
            return "<fabricsim.Result (unreadable summary)>"
        parts = [f"{s.get('config_name', '?')!r}", f"seed={s.get('seed')}"]
        requests = s.get("requests")
        if isinstance(requests, Mapping):
            parts.append(f"completed={requests.get('completed')}/{requests.get('issued')}")
        if isinstance(s.get("throughput_GBps"), (int, float)):
            parts.append(f"throughput={s['throughput_GBps']:.3g} GB/s")
        latency = s.get("latency_ns")
        if isinstance(latency, Mapping) and isinstance(latency.get("mean"), (int, float)):
            parts.append(f"mean_latency={latency['mean']:.4g} ns")
        if s.get("deadlock"):
            parts.append("DEADLOCK")
        return f"<fabricsim.Result {' '.join(parts)}>"
