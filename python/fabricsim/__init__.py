"""fabricsim: simulator and model checker for memory interconnect fabrics (CXL, PCIe, ...).

The simulation core is Rust (``fabricsim._core``); this package adds configuration handling,
results as pandas DataFrames, and the ``fabricsim`` command line.

>>> import fabricsim
>>> result = fabricsim.run("examples/cxl_expander.toml", seed=1)   # doctest: +SKIP
>>> result.links                                                    # doctest: +SKIP
"""

from __future__ import annotations

import json
import os
import sys
import warnings
from typing import Any, Callable

from . import _core
from ._config import ConfigLike, OverridesLike, check_writable_dir, load_config, overrides_list
from ._core import ConfigError, StopToken
from .result import Result

__version__: str = _core.__version__

__all__ = [
    "run",
    "validate",
    "bench",
    "sweep",
    "load",
    "plot",
    "check",
    "litmus",
    "protocols",
    "core_presets",
    "Result",
    "ConfigError",
    "ConfigWarning",
    "Interrupted",
    "StopToken",
    "__version__",
]


class ConfigWarning(UserWarning):
    """A valid configuration with what looks like a slip (a cache size in decimal units, a set
    count that is not a power of two). ``validate`` warns with it; a run lists it in
    ``Result.warnings``."""


class Interrupted(KeyboardInterrupt):
    """Ctrl-C stopped an exhaustive search (``check``, ``litmus``); ``report`` holds what was
    explored so far (``states``, ``depth``, ``complete`` = False)."""

    def __init__(self, message: str, report: dict[str, Any]):
        super().__init__(message)
        self.report = report


ProgressCallback = Callable[[float, str], None]


def validate(config: ConfigLike, set: OverridesLike = None) -> dict[str, Any]:
    """Validate a configuration and return it fully resolved (defaults filled in).

    ``config`` is a path to a .toml file, TOML text (a string with a newline) or a dict.
    ``set`` holds overrides: a dict ``{"workload.requests": 50}`` or a list of
    ``"key=value"`` strings. Raises :class:`ConfigError` with a message naming the source,
    the key, the value and what was expected.
    """
    src = load_config(config)
    resolved, warns = _core.validate(src.text, src.source, fmt=src.fmt, overrides=overrides_list(set))
    for w in warns:
        warnings.warn(w, ConfigWarning, stacklevel=2)
    return json.loads(resolved)


def run(
    config: ConfigLike,
    seed: int | None = None,
    set: OverridesLike = None,
    out: str | os.PathLike | None = None,
    progress: None | bool | ProgressCallback = None,
    profile: bool = False,
) -> Result:
    """Run one simulation and return its :class:`Result`.

    - ``config``: path to a .toml file, TOML text (a string with a newline) or a dict;
    - ``seed``: overrides the configuration's seed;
    - ``set``: overrides, a dict ``{key: value}`` or a list of ``"key=value"`` strings;
    - ``out``: if given, the result is also written to this directory (see :meth:`Result.write`);
    - ``progress``: ``None`` shows a progress bar when stderr is a terminal, ``False`` shows
      nothing, ``True`` always shows the bar, a callable is called as
      ``progress(fraction_done, text)``;
    - ``profile``: the summary gets a ``profile`` object: the events the engine handled by
      kind (deterministic), events per second and the share of wall time in the fabric,
      protocol handlers, caches, DRAM, driver and event queue (wall time: not deterministic;
      docs/performance.md). The simulated results are the same with and without it.

    The simulation releases the GIL. Ctrl-C stops it cleanly and raises KeyboardInterrupt.
    """
    src = load_config(config)
    overrides = overrides_list(set)
    if seed is not None:
        seed = _check_seed(seed)
    if out is not None:
        check_writable_dir(out, "out =")

    bar = None
    callback: ProgressCallback | None
    if callable(progress):
        callback = progress
    elif progress is True or (progress is None and _stderr_is_tty()):
        bar, callback = _progress_bar()
    else:
        callback = None

    try:
        raw = _core.run(
            src.text,
            src.source,
            fmt=src.fmt,
            overrides=overrides,
            seed=seed,
            progress=callback,
            profile=bool(profile),
        )
    finally:
        if bar is not None:
            bar.close()

    result = Result(raw)
    if out is not None:
        result.write(out)
    return result


def bench(quick: bool = False) -> dict[str, Any]:
    """Benchmark the timing engine and fabric: events/s, packet hops/s, ..."""
    return json.loads(_core.bench(quick=quick))


def protocols() -> list[dict[str, Any]]:
    """Every protocol family fabricsim has: its name, what it is, what the ``[check]`` sizes
    mean for it, its ``[protocol.<name>]`` keys (type, default, doc; ``check.params``: those a
    check reads) and its mutants (what each breaks)."""
    return json.loads(_core.protocols())


def core_presets() -> dict[str, dict[str, Any]]:
    """Every named core (``[protocol.core] preset``; docs/cpu-presets.md cites each value), by
    name: ``rob``, ``width``, ``load_queue``, ``fill_buffers``, ``store_buffer``, ``wc_buffers``,
    ``cycle_ps`` and the private levels ``l1``, ``l2`` (``size`` in bytes, ``ways``,
    ``latency_cycles``, ``mshrs``). An experiment reads its machine's core here rather than
    restating it."""
    return {p["name"]: p for p in json.loads(_core.core_presets())}


def _check_seed(seed: Any) -> int:
    if isinstance(seed, bool) or not isinstance(seed, int):
        index = getattr(seed, "__index__", None)  # numpy integers
        if isinstance(seed, bool) or index is None:
            raise TypeError(f"seed must be an integer, not {type(seed).__name__}")
        seed = index()
    if seed < 0 or seed >= 2**64:
        raise ConfigError(f"seed = {seed}: expected an integer from 0 to 2^64-1")
    return seed


def _stderr_is_tty() -> bool:
    try:
        return sys.stderr is not None and sys.stderr.isatty()
    except (AttributeError, ValueError):
        return False


def _progress_bar():
    from tqdm import tqdm

    try:
        size = os.get_terminal_size(sys.stderr.fileno())
        sized = size.columns > 0 and size.lines > 0
    except (AttributeError, ValueError, OSError):
        sized = False
    bar = tqdm(
        total=100,
        unit="%",
        leave=False,
        file=sys.stderr,
        bar_format="{percentage:3.0f}%|{bar}| [{elapsed}<{remaining}]{postfix}",
        # a terminal that reports no size (some ptys) would otherwise get no bar at all
        dynamic_ncols=sized,
        ncols=None if sized else 80,
        nrows=None if sized else 24,
    )

    def callback(fraction: float, text: str = "") -> None:
        bar.n = min(100.0, max(0.0, float(fraction) * 100.0))
        if text:
            bar.set_postfix_str(text, refresh=False)
        bar.refresh()

    return bar, callback


def sweep(*args: Any, **kwargs: Any):
    """Run a parameter sweep; see :func:`fabricsim.sweeps.sweep`."""
    from .sweeps import sweep as _sweep

    return _sweep(*args, **kwargs)


def load(db: str | os.PathLike, sweep: str | None = None):
    """The points of a sweep store as a pandas DataFrame (one column per parameter and metric)."""
    from .store import load as _load

    return _load(db, sweep=sweep)


def plot(results: Any, x: str, y: str, by: str | None = None, **kwargs: Any):
    """Plot metric ``y`` of a sweep against parameter ``x``, one line per value of ``by``
    (``results``: a DataFrame from :func:`load` or a sweep store's path); see
    :func:`fabricsim.plotting.plot`. Returns the matplotlib Axes."""
    from .plotting import plot as _plot

    return _plot(results, x, y, by=by, **kwargs)


def check(config: ConfigLike, set: OverridesLike = None, progress: bool = False) -> dict[str, Any]:
    """Exhaustively explore a protocol configuration: ``[protocol] name`` (or ``table``), the
    family's ``[protocol.<name>]`` keys as ``run`` reads them, and ``[check]`` (sizes, bounds).

    Returns the report: ``ok``, ``states``, ``transitions``, ``seconds``, ``states_per_s``,
    ``peak_rss_kb``, ``violation`` (kind, detail, trace steps), ``trace_text`` and ``chart``
    (an SVG sequence chart of the counterexample, or None). With ``progress``, a line of
    progress goes to stderr every few seconds.
    """
    src = load_config(config)
    report, trace, chart = _core.check(
        src.text, src.source, fmt=src.fmt, overrides=overrides_list(set), progress=progress
    )
    out = json.loads(report)
    out["trace_text"] = trace
    out["chart"] = chart
    if out.get("interrupted"):
        raise Interrupted(
            f"{out['protocol']}: incomplete: {out['states']:,} states, {out['transitions']:,} transitions, "
            f"depth {out['depth']} explored",
            out,
        )
    return out


def litmus(
    path: str | os.PathLike,
    model: str,
    protocol: str | None = None,
    mapping: str = "standard",
    stop: Any = None,
    set: OverridesLike = None,
    mutant: str | None = None,
    config: ConfigLike | None = None,
) -> dict[str, Any]:
    """A litmus test's verdict under ``model`` (sc, tso, rc); with ``protocol`` also the outcomes the
    protocol produces (``observed``) and whether they are all allowed (``ok``). Under tso, ``mapping``
    says how C11 is compiled to x86: ``standard`` (a seq_cst store is a store and MFENCE) or ``plain``
    (every store a plain store). ``stop``, a :class:`StopToken`, stops the search when set (for runs
    in other threads, which Ctrl-C does not reach).

    The protocol's keys are its ``[protocol.<name>]`` table, as ``fabricsim run`` reads it: from
    ``config`` (a configuration with a ``[protocol]`` table, whose ``name`` is used when ``protocol``
    is None) and ``set`` (``{"variant": "rc-opt", "nic": 1}`` or ``"KEY=VALUE"`` strings, KEY within
    ``[protocol.<name>]``); ``mutant`` is one of the family's mutants. On a failure, ``trace_text``
    is the shortest interleaving and ``chart`` its SVG sequence chart."""
    path = os.fspath(path)
    try:
        with open(path, encoding="utf-8-sig") as f:
            text = f.read()
    except UnicodeDecodeError as exc:
        raise ConfigError(
            f"{path}: not UTF-8 text (byte {exc.start}: {exc.reason}); expected a C litmus file"
        ) from None
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read: {exc.strerror or exc}") from None
    cfg = None
    if config is not None:
        src = load_config(config)
        cfg = (src.text, src.source, src.fmt)
    out = json.loads(
        _core.litmus(
            text, path, model, protocol, mapping, stop, overrides=overrides_list(set), mutant=mutant, config=cfg
        )
    )
    if out.get("interrupted"):
        raise Interrupted(f"{path}: {out['test']}: incomplete: {out['states']:,} states explored", out)
    return out
