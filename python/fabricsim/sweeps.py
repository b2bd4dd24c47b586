"""Parameter sweeps: a base configuration, a grid and zipped lists of
overrides, seeds, and the metrics to keep; run on local worker processes or a
Dask cluster, stored point by point in SQLite (see :mod:`fabricsim.store`).

A sweep specification in TOML::

    [sweep]
    name = "window"
    base = "../examples/cxl_expander.toml"   # relative to this file
    seeds = [1, 2]
    metrics = ["throughput_GBps", "latency_ns.mean", "links.utilization.max"]

    [grid]                      # every combination
    "workload.window" = [16, 64, 256]

    [zip]                       # varied together, lists of equal length
    "topology.switches" = [2, 4, 8]
    "topology.requesters" = [2, 4, 8]

Results do not depend on the backend or the number of workers: each point is
one deterministic simulation, and only simulation outputs are stored as
metrics (wall time is kept in its own column).
"""

from __future__ import annotations

import builtins
import hashlib
import itertools
import json
import os
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Callable

from . import _core
from ._config import ConfigError, load_config
from .store import Store, frame

DEFAULT_METRICS = (
    "throughput_GBps",
    "latency_ns.mean",
    "latency_ns.p50",
    "latency_ns.p99",
    "requests.completed",
    "outcome",
)

SPEC_KEYS = {"sweep", "grid", "zip", "base"}
SWEEP_KEYS = {"name", "base", "seeds", "metrics", "extract"}


@dataclass
class Point:
    """One simulation of a sweep: everything a worker needs, picklable."""

    sweep: str
    text: str
    source: str
    fmt: str
    params: dict[str, Any]
    seed: int
    metrics: tuple[str, ...]
    extract: str | None = None  # "module:function" taking a Result, returning a dict
    #: "module:function" taking the Point and returning its metrics, run instead of a simulation
    #: (a model-checking or litmus point: the text is its specification, params its overrides)
    runner: str | None = None
    #: columns that describe the point in results but are not overrides
    labels: dict[str, Any] = field(default_factory=dict)

    @property
    def overrides(self) -> list[str]:
        return [f"{k}={toml_value(v)}" for k, v in self.params.items()]

    @property
    def key(self) -> str:
        h = hashlib.sha256()
        for part in (
            self.text,
            self.fmt,
            json.dumps(self.params, sort_keys=True),
            json.dumps(self.labels, sort_keys=True),
            str(self.seed),
            ",".join(self.metrics),
            self.extract or "",
            self.runner or "",
            _core.__version__,
        ):
            h.update(part.encode())
            h.update(b"\0")
        return h.hexdigest()[:32]


@dataclass
class Sweep:
    name: str
    points: list[Point] = field(default_factory=list)


def toml_value(v: Any) -> str:
    """An override value written as TOML (strings quoted, so they stay strings)."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return repr(v)
    if isinstance(v, str):
        return json.dumps(v, ensure_ascii=False)
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(toml_value(x) for x in v) + "]"
    item = getattr(v, "item", None)  # numpy scalars
    if callable(item):
        return toml_value(item())
    raise ConfigError(f"sweep value {v!r}: expected a number, string, boolean or list")


def _read_toml(path: str) -> dict[str, Any]:
    try:
        import tomllib  # Python >= 3.11
    except ModuleNotFoundError:  # pragma: no cover - older Pythons
        import tomli as tomllib  # type: ignore[no-redef]
    try:
        with open(path, "rb") as f:
            return tomllib.load(f)
    except FileNotFoundError:
        raise ConfigError(f"{path}: no such sweep specification") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: TOML syntax error: {exc}") from None


def build(
    base: Any,
    grid: Mapping[str, Sequence[Any]] | None = None,
    zip: Mapping[str, Sequence[Any]] | None = None,  # noqa: A002 - the spec's own word
    seeds: Sequence[int] = (1,),
    metrics: Sequence[str] = DEFAULT_METRICS,
    name: str = "sweep",
    extract: str | None = None,
    source: str = "<python>",
) -> Sweep:
    """Expand a sweep into points and validate every one before anything runs.

    An error names the sweep source, the key and what is wrong, e.g.
    ``sweep.toml: grid."workload.windw": unknown key, ...``.
    """
    cfg = load_config(base)
    for table, given in (("grid", grid), ("zip", zip)):
        if given is not None and not isinstance(given, Mapping):
            raise ConfigError(f"{source}: {table}: expected a table of key = [values]")
    grid = dict(grid or {})
    zipped = dict(zip or {})
    for table, values in (("grid", grid), ("zip", zipped)):
        for k, v in values.items():
            if not isinstance(v, (list, tuple)) or len(v) == 0:
                raise ConfigError(f'{source}: {table}."{k}": expected a non-empty list of values')
            for x in v:
                try:
                    toml_value(x)
                except ConfigError as exc:
                    raise ConfigError(f'{source}: {table}."{k}": {exc}') from None
    both = [k for k in grid if k in zipped]
    if both:
        raise ConfigError(
            f'{source}: zip."{both[0]}": also in grid; expected each key in one of grid and zip, not both'
        )
    lengths = {len(v) for v in zipped.values()}
    if len(lengths) > 1:
        detail = ", ".join(f'"{k}" has {len(v)}' for k, v in zipped.items())
        raise ConfigError(f"{source}: zip: lists must have equal lengths ({detail})")
    if (
        isinstance(seeds, (str, bytes))
        or not isinstance(seeds, Sequence)
        or not seeds
        or not all(isinstance(s, int) and not isinstance(s, bool) and 0 <= s < 2**64 for s in seeds)
    ):
        raise ConfigError(f"{source}: sweep.seeds: expected a non-empty list of integers from 0 to 2^64-1")
    if isinstance(metrics, str) or not all(isinstance(m, str) for m in metrics):
        raise ConfigError(f"{source}: sweep.metrics: expected a list of metric names")

    grid_keys = list(grid)
    combos = list(itertools.product(*[grid[k] for k in grid_keys])) if grid_keys else [()]
    zip_rows = [dict(r) for r in _zip_rows(zipped)] or [{}]
    points = []
    for combo in combos:
        for zrow in zip_rows:
            params = dict(builtins.zip(grid_keys, combo))
            params.update(zrow)
            for seed in seeds:
                points.append(
                    Point(
                        name,
                        cfg.text,
                        cfg.source,
                        cfg.fmt,
                        params,
                        int(seed),
                        tuple(metrics),
                        extract,
                    )
                )
    # Validate each distinct parameter set once, before anything runs.
    seen: set[str] = set()
    for p in points:
        sig = json.dumps(p.params, sort_keys=True)
        if sig in seen:
            continue
        seen.add(sig)
        try:
            _core.validate(p.text, p.source, fmt=p.fmt, overrides=p.overrides)
        except _core.ConfigError as exc:
            msg = str(exc)
            bad = next((k for k in p.params if f"--set {k}=" in msg), None)
            where = f'{_table_of(bad, grid, zipped)}."{bad}"' if bad else "base"
            raise ConfigError(f"{source}: {where}: {msg}") from None
    return Sweep(name, points)


def _zip_rows(zipped: Mapping[str, Sequence[Any]]) -> list[list[tuple[str, Any]]]:
    if not zipped:
        return []
    keys = list(zipped)
    n = len(zipped[keys[0]])
    return [[(k, zipped[k][i]) for k in keys] for i in range(n)]


def _table_of(key: str, grid: Mapping, zipped: Mapping) -> str:
    return "grid" if key in grid else "zip"


def load_spec(path: str | os.PathLike) -> Sweep:
    """Read a TOML sweep specification (see the module documentation)."""
    path = os.fspath(path)
    spec = _read_toml(path)
    unknown = set(spec) - SPEC_KEYS
    if unknown:
        raise ConfigError(f"{path}: {sorted(unknown)[0]}: unknown key, expected one of sweep, grid, zip, base")
    sw = spec.get("sweep")
    if not isinstance(sw, dict):
        raise ConfigError(f"{path}: sweep: missing [sweep] table")
    unknown = set(sw) - SWEEP_KEYS
    if unknown:
        raise ConfigError(
            f"{path}: sweep.{sorted(unknown)[0]}: unknown key, expected one of {', '.join(sorted(SWEEP_KEYS))}"
        )
    if "base" in spec and "base" in sw:
        raise ConfigError(f"{path}: sweep.base: give the base as a file (sweep.base) or a [base] table, not both")
    if "base" in spec:
        base: Any = spec["base"]
    elif isinstance(sw.get("base"), str):
        base = os.path.join(os.path.dirname(path), sw["base"])
    else:
        raise ConfigError(f"{path}: sweep.base: missing; expected a configuration file path or a [base] table")
    return build(
        base,
        grid=spec.get("grid"),
        zip=spec.get("zip"),
        seeds=sw.get("seeds", [1]),
        metrics=sw.get("metrics", list(DEFAULT_METRICS)),
        name=sw.get("name", os.path.splitext(os.path.basename(path))[0]),
        extract=sw.get("extract"),
        source=path,
    )


# ---------------------------------------------------------------- metrics


def pick(summary: Mapping[str, Any], tables: Mapping[str, Any], metric: str) -> Any:
    """Value of one metric name.

    - ``a.b.c``: a path into the summary (``latency_ns.p99``);
    - ``links.<column>.<max|mean|min|sum>``: an aggregate over link directions;
    - ``links[FROM->TO].<column>``: one link direction's value.
    """
    if metric.startswith("links"):
        links = tables["links"]
        if metric.startswith("links["):
            sel, _, col = metric[len("links[") :].partition("].")
            frm, _, to = sel.partition("->")
            row = links[(links["from"] == frm) & (links["to"] == to)]
            if row.empty or col not in links:
                raise KeyError(metric)
            return float(row[col].iloc[0])
        _, col, agg = metric.split(".")
        return float(getattr(links[col], agg)())
    v: Any = summary
    for part in metric.split("."):
        if not isinstance(v, Mapping) or part not in v:
            raise KeyError(metric)
        v = v[part]
    return v


class UnknownMetric(ValueError):
    """A metric name the results do not have."""


def _metric_names(summary: Mapping[str, Any], prefix: str = "") -> list[str]:
    """The summary's leaf paths (``latency_ns.p99``), in order."""
    names = []
    for k, v in summary.items():
        path = f"{prefix}{k}"
        names.extend(_metric_names(v, f"{path}.") if isinstance(v, Mapping) else [path])
    return names


def _unknown_metric(metric: str, summary: Mapping[str, Any]) -> UnknownMetric:
    import difflib

    names = _metric_names(summary) + ["links.<column>.<max|mean|min|sum>", "links[FROM->TO].<column>"]
    close = difflib.get_close_matches(metric, names, n=1, cutoff=0.6)
    hint = f"did you mean {close[0]!r}? " if close else ""
    return UnknownMetric(f"metric {metric!r}: not in the results; {hint}(the results have: {', '.join(names)})")


def run_point(point: Point) -> dict[str, Any]:
    """Run one point; never raises: failures come back as an error row."""
    t0 = time.perf_counter()
    row: dict[str, Any] = {
        "key": point.key,
        "sweep": point.sweep,
        "params": {**point.labels, **point.params},
        "seed": point.seed,
        "version": _core.__version__,
    }
    try:
        if point.runner:
            row.update(status="ok", metrics=_resolve(point.runner)(point), error=None)
            row["wall_s"] = time.perf_counter() - t0
            return row
        r = _run_text(point.text, point)
        outcome = r.summary.get("outcome", "completed")
        metrics = {}
        tables = {"links": r.links} if any(m.startswith("links") for m in point.metrics) else {}
        for m in point.metrics:
            try:
                metrics[m] = pick(r.summary, tables, m)
            except KeyError:
                if outcome == "completed":
                    raise _unknown_metric(m, r.summary) from None
        if point.extract:
            metrics.update(_resolve(point.extract)(r))
        if outcome == "completed":
            row.update(status="ok", metrics=metrics, error=None)
        else:  # a deadlock or sim.max_time: the metrics are kept, but the point did not complete
            done = r.summary.get("requests", {}).get("completed")
            row.update(
                status="error",
                metrics=metrics,
                error=f"outcome {outcome}: the run did not complete ({done} requests completed)",
            )
    except KeyboardInterrupt:
        raise
    except Exception as exc:  # noqa: BLE001 - a failed point is data, stored with its error
        row.update(status="error", metrics=None, error=f"{type(exc).__name__}: {exc}")
    row["wall_s"] = time.perf_counter() - t0
    return row


def _run_text(text: str, point: Point):
    from .result import Result

    raw = _core.run(text, point.source, fmt=point.fmt, overrides=point.overrides, seed=point.seed, progress=None)
    return Result(raw)


def _resolve(spec: str) -> Callable:
    module, _, func = spec.partition(":")
    mod = __import__(module, fromlist=[func])
    return getattr(mod, func)


# ---------------------------------------------------------------- execution


def execute(
    sweep: Sweep,
    db: str | os.PathLike,
    workers: int | None = None,
    dask: str | None = None,
    progress: bool | None = None,
    retry_failed: bool = False,
):
    """Run the points of ``sweep`` not yet in ``db``; return all its points as a DataFrame.

    ``workers``: local processes (default: one per core); ``dask``: ``"local"`` for a
    ``LocalCluster`` or a scheduler address. Points that failed before are reported and
    skipped unless ``retry_failed``.
    """
    with Store(db) as store:
        done = store.done_keys()
        keys = [p.key for p in sweep.points]
        todo, seen = [], set()
        failed_before = 0
        for p in sweep.points:
            if p.key in seen:
                continue
            seen.add(p.key)
            status = done.get(p.key)
            if status == "ok" or (status == "error" and not retry_failed):
                failed_before += status == "error"
                continue
            todo.append(p)
        total = len(seen)
        bar = _Progress(total, total - len(todo), failed_before, progress)
        try:
            if todo and not todo[0].runner:
                # The metric names are checked on the first point, before the others run: a
                # misspelt name is a configuration error, not a sweep of failed points.
                # It runs in a process of its own as every point does (one that aborts is its
                # failure, not the sweep's).
                held = _Held()
                _run_local(todo[:1], 1, held, _NoBar())  # type: ignore[arg-type]
                first = held.row
                if first["status"] == "error" and str(first["error"]).startswith("UnknownMetric: "):
                    raise ConfigError(f"sweep.metrics: {first['error'].removeprefix('UnknownMetric: ')}")
                store.put(first)
                bar.update(first)
                todo = todo[1:]
            if todo:
                if dask is not None:
                    _run_dask(todo, dask, workers, store, bar)
                else:
                    _run_local(todo, workers, store, bar)
        finally:
            bar.close()
        rows = store.rows(keys=keys)
    df = frame(rows)
    failures = [r for r in rows if r["status"] == "error"]
    if failures:
        first = failures[0]
        print(
            f"{len(failures)} of {total} points failed (stored with their errors; "
            f"re-run with --retry-failed to try again); first: {first['params']} seed {first['seed']}: "
            f"{first['error']}",
            file=sys.stderr,
        )
    return df


class WorkerDied(RuntimeError):
    pass


class _Held:
    """A store for one row, looked at before it is stored."""

    row: dict[str, Any] = {}

    def put(self, row: dict[str, Any]) -> None:
        self.row = row


class _NoBar:
    def update(self, row: dict[str, Any]) -> None:
        pass


def _die_with_parent(parent: int) -> None:
    """In a worker: exit as soon as the sweep process is gone, even if it was ``kill -9``'d."""
    if sys.platform.startswith("linux"):
        try:
            import ctypes
            import signal

            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(1, int(signal.SIGKILL), 0, 0, 0)  # PR_SET_PDEATHSIG
        except (OSError, AttributeError):
            pass
    import threading

    def watch() -> None:  # a portable fallback: poll the parent's pid
        while os.getppid() == parent:
            time.sleep(0.5)
        os._exit(137)

    threading.Thread(target=watch, daemon=True).start()
    if os.getppid() != parent:
        os._exit(137)


def _point_process(point: Point, conn: Any, parent: int) -> None:
    _die_with_parent(parent)
    try:
        row = run_point(point)
    except KeyboardInterrupt:
        os._exit(130)
    conn.send(row)
    conn.close()


def _death_row(point: Point, exitcode: int | None, t0: float) -> dict[str, Any]:
    """A point whose process died: stored as that point's failure, with the signal."""
    import signal

    if exitcode is not None and exitcode < 0:
        try:
            how = f"killed by signal {signal.Signals(-exitcode).name} ({-exitcode})"
        except ValueError:
            how = f"killed by signal {-exitcode}"
    else:
        how = f"exited with code {exitcode} without a result"
    return {
        "key": point.key,
        "sweep": point.sweep,
        "params": {**point.labels, **point.params},
        "seed": point.seed,
        "version": _core.__version__,
        "status": "error",
        "metrics": None,
        "error": f"WorkerDied: the process running this point {how}",
        "wall_s": time.perf_counter() - t0,
    }


def _run_local(todo: list[Point], workers: int | None, store: Store, bar: _Progress) -> None:
    """Each point in its own process (at most ``workers`` at once), so a point that kills its
    process (an abort, a signal) is stored as that point's failure and the sweep goes on."""
    import multiprocessing as mp
    from multiprocessing.connection import wait

    n = max(1, workers or os.cpu_count() or 1)
    ctx = mp.get_context("fork" if sys.platform.startswith("linux") else "spawn")
    pending = list(reversed(todo))
    running: dict[Any, tuple[Any, Any, Point, float]] = {}  # sentinel -> (process, conn, point, start)
    me = os.getpid()
    try:
        while pending or running:
            while pending and len(running) < n:
                point = pending.pop()
                recv, send = ctx.Pipe(duplex=False)
                proc = ctx.Process(target=_point_process, args=(point, send, me), daemon=True)
                proc.start()
                send.close()
                running[proc.sentinel] = (proc, recv, point, time.perf_counter())
            conns = {entry[1]: sentinel for sentinel, entry in running.items()}
            for ready in wait(list(running) + list(conns)):
                sentinel = conns.get(ready, ready)
                if sentinel not in running:
                    continue  # both its pipe and its sentinel were ready
                proc, recv, point, t0 = running.pop(sentinel)
                try:
                    row = recv.recv()
                except (EOFError, OSError):
                    row = None
                recv.close()
                proc.join()
                if row is None:
                    row = _death_row(point, proc.exitcode, t0)
                store.put(row)
                bar.update(row)
    finally:
        for proc, recv, _, _ in running.values():
            proc.kill()
            proc.join()
            recv.close()


def _run_dask(todo: list[Point], address: str, workers: int | None, store: Store, bar: _Progress) -> None:
    try:
        from dask.distributed import Client, LocalCluster, as_completed
    except ImportError:
        raise ConfigError("--dask needs dask's distributed scheduler: pip install 'fabricsim[dask]'") from None
    cluster = None
    if address == "local":
        cluster = LocalCluster(
            n_workers=max(1, workers or os.cpu_count() or 1),
            threads_per_worker=1,
            processes=True,
            dashboard_address=None,
        )
        client = Client(cluster)
    else:
        client = Client(address)
    try:
        futures = client.map(run_point, todo, pure=False)
        for fut in as_completed(futures):
            row = fut.result()
            store.put(row)
            bar.update(row)
    finally:
        client.close()
        if cluster is not None:
            cluster.close()


class _Progress:
    """Points done / total, failures and time left; silent when not on a terminal."""

    def __init__(self, total: int, done: int, failed: int, show: bool | None):
        self.failed = failed
        self.bar = None
        if show is None:
            show = sys.stderr.isatty()
        if show and total:
            from tqdm import tqdm

            self.bar = tqdm(total=total, initial=done, unit="pt", dynamic_ncols=True, file=sys.stderr)
            self.bar.set_postfix(failed=failed)

    def update(self, row: dict[str, Any]) -> None:
        if row["status"] == "error":
            self.failed += 1
        if self.bar is not None:
            self.bar.update(1)
            self.bar.set_postfix(failed=self.failed)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def sweep(
    base: Any,
    grid: Mapping[str, Sequence[Any]] | None = None,
    zip: Mapping[str, Sequence[Any]] | None = None,  # noqa: A002
    seeds: Sequence[int] = (1,),
    metrics: Sequence[str] = DEFAULT_METRICS,
    db: str | os.PathLike = "sweep.db",
    name: str = "sweep",
    workers: int | None = None,
    dask: str | None = None,
    progress: bool | None = None,
    extract: str | None = None,
    retry_failed: bool = False,
):
    """Build, validate and run a sweep; return its points as a pandas DataFrame."""
    sw = build(base, grid=grid, zip=zip, seeds=seeds, metrics=metrics, name=name, extract=extract)
    return execute(sw, db, workers=workers, dask=dask, progress=progress, retry_failed=retry_failed)


def parallel_efficiency(points: int = 8, requests: int = 3000, workers: int = 2) -> dict[str, Any]:
    """Speed-up of a sweep on ``workers`` local processes over one, divided by ``workers``.

    Each point is the 8x8-mesh benchmark system (about a second of simulation), so the
    figure measures the sweep layer's overhead on realistic points, not process start-up.
    """
    import tempfile

    from ._core import bench_config

    base = bench_config()
    wall = {}
    with tempfile.TemporaryDirectory() as tmp:
        for n in (1, workers):
            sw = build(
                base,
                grid={"workload.requests": [requests]},
                seeds=list(range(1, points + 1)),
                metrics=["throughput_GBps"],
                name=f"efficiency-{n}",
                source="<bench>",
            )
            t0 = time.perf_counter()
            df = execute(sw, os.path.join(tmp, f"w{n}.db"), workers=n, progress=False)
            wall[n] = time.perf_counter() - t0
            if (df["status"] != "ok").any():
                raise RuntimeError(f"benchmark sweep failed: {df['error'].dropna().iloc[0]}")
    speedup = wall[1] / wall[workers]
    return {
        "what": f"{points} points of the 8x8 mesh benchmark, 1 vs {workers} local workers",
        "points": points,
        "seconds_per_point": wall[1] / points,
        "wall_s_1_worker": wall[1],
        f"wall_s_{workers}_workers": wall[workers],
        "speedup": speedup,
        "parallel_efficiency": speedup / workers,
    }
