"""The ``fabricsim`` command line.

Each subcommand is a pair of functions, ``add_<name>(subparsers)`` which declares its
arguments and sets ``func``, and ``cmd_<name>(args) -> int``. To add one, write the pair and
list ``add_<name>`` in :data:`COMMANDS`.

Exit codes (README "Exit codes"): 0 completed / ok, 1 error (simulation, I/O, a resource
limit, failed sweep points), 2 usage or configuration error, 3 deadlock, 4 time limit
(``sim.max_time`` reached with work left), 5 violation found (``check``: an invariant fails;
``litmus --protocol``: an outcome the model forbids, or an incomplete exploration), 6 incomplete
(``check`` stopped at a bound: not a proof), 130 interrupted (Ctrl-C).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import textwrap
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Callable

EXIT_OK = 0
EXIT_ERROR = 1
EXIT_CONFIG = 2
EXIT_USAGE = 2
EXIT_DEADLOCK = 3
EXIT_TIME_LIMIT = 4
EXIT_VIOLATION = 5
EXIT_INCOMPLETE = 6
EXIT_INTERRUPTED = 130

#: Exit code of `fabricsim run` per simulation outcome.
RUN_EXIT = {
    "completed": EXIT_OK,
    "deadlock": EXIT_DEADLOCK,
    "time_limit": EXIT_TIME_LIMIT,
    "protocol_error": EXIT_VIOLATION,
}


def _error(message: str) -> None:
    print(f"error: {message}", file=sys.stderr)


def _api():
    # Imported here so that `fabricsim --help` works (and says so) even if the extension is
    # missing, and so that argument errors are reported before the core is loaded.
    import fabricsim

    return fabricsim


def _guarded(func: Callable[[argparse.Namespace], int], args: argparse.Namespace) -> int:
    """Run a command, turning the errors a user can cause into messages and exit codes."""
    fabricsim = _api()
    try:
        return func(args)
    except fabricsim.ConfigError as exc:
        _error(str(exc))
        return EXIT_CONFIG
    except fabricsim.Interrupted as exc:
        print(f"interrupted: {exc}", file=sys.stderr)
        return EXIT_INTERRUPTED
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except RuntimeError as exc:
        _error(str(exc))
        return EXIT_ERROR
    except BrokenPipeError:
        raise  # handled quietly by main()
    except OSError as exc:
        _error(str(exc))
        return EXIT_ERROR


def check_writable_dir(path: str, what: str) -> None:
    from ._config import check_writable_dir as check  # loads the core: see _api()

    check(path, what)


def check_writable_file(path: str, what: str) -> None:
    from ._config import check_writable_file as check

    check(path, what)


def _progress(args: argparse.Namespace) -> bool | None:
    return False if getattr(args, "quiet", False) else None


def _add_set(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--set",
        dest="overrides",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="override one configuration value, e.g. --set workload.requests=1000 (may be repeated)",
    )


# -- run ------------------------------------------------------------------------------------
def add_run(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("run", help="run one simulation", description="Run one simulation.")
    p.add_argument("config", metavar="CONFIG", help="configuration file (.toml)")
    p.add_argument("--seed", type=int, default=None, metavar="N", help="random seed")
    _add_set(p)
    p.add_argument(
        "--out",
        default=None,
        metavar="DIR",
        help="write summary.json, timing.json and the CSV tables to DIR",
    )
    p.add_argument("--json", action="store_true", help="print the summary as JSON")
    p.add_argument("--quiet", "-q", action="store_true", help="no progress bar and no summary table")
    p.add_argument(
        "--profile",
        action="store_true",
        help="where the time goes: events handled by kind, events/s and the share of wall time in "
        "fabric, protocol, caches, DRAM, driver and event queue (summary.json 'profile' and a table; "
        "the shares are wall time, not deterministic; docs/performance.md)",
    )
    p.set_defaults(func=cmd_run)


def cmd_run(args: argparse.Namespace) -> int:
    fabricsim = _api()
    if args.out is not None:
        check_writable_dir(args.out, "--out")
    result = fabricsim.run(
        args.config,
        seed=args.seed,
        set=args.overrides,
        out=args.out,
        progress=_progress(args),
        profile=args.profile,
    )
    if args.json:
        print(result.summary_json.rstrip("\n"))
    elif not args.quiet:
        print(result.text.rstrip("\n"))
    if args.out is not None and not args.quiet:
        # the table above shows the busiest links only; links.csv has every one
        print(f"wrote {args.out} (every link direction in {Path(args.out) / 'links.csv'})", file=sys.stderr)
    outcome = result.summary.get("outcome", "completed")
    if outcome != "completed" and not args.json:
        print(
            f"{args.config}: {outcome.replace('_', ' ')} (exit code {RUN_EXIT.get(outcome, EXIT_ERROR)})",
            file=sys.stderr,
        )
    return RUN_EXIT.get(outcome, EXIT_ERROR)


# -- validate -------------------------------------------------------------------------------
def add_validate(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "validate",
        help="check a configuration without running it",
        description="Check a configuration without running it.",
    )
    p.add_argument("config", metavar="CONFIG", help="configuration file (.toml)")
    _add_set(p)
    p.set_defaults(func=cmd_validate)


_COUNTED = (
    ("requester", "requesters"),
    ("memory", "memories"),
    ("switch", "switches"),
    ("link", "links"),
)


def describe_config(resolved: Mapping[str, Any]) -> str:
    """'2 requesters, 1 memory, ...' from the counts the core reports after generation."""
    counts = resolved.get("system", {})
    parts = []
    for singular, plural in _COUNTED:
        n = counts.get(plural)
        if isinstance(n, int):
            parts.append(f"{n} {singular if n == 1 else plural}")
    return ", ".join(parts)


def cmd_validate(args: argparse.Namespace) -> int:
    import warnings

    fabricsim = _api()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", fabricsim.ConfigWarning)
        resolved = fabricsim.validate(args.config, set=args.overrides)
    for w in caught:
        print(f"warning: {w.message}", file=sys.stderr)
    counts = describe_config(resolved) if isinstance(resolved, Mapping) else ""
    print(f"{args.config}: ok ({counts})" if counts else f"{args.config}: ok")
    return EXIT_OK


# -- check ----------------------------------------------------------------------------------
def add_check(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "check",
        help="explore every reachable state of a protocol and check its invariants",
        description="Exhaustive, breadth-first exploration of a protocol configuration ([protocol] name or "
        "table, the family's [protocol.NAME] keys, [check] sizes and bounds): "
        "single writer / multiple readers, data values, deadlock, unexpected messages. "
        "A violation prints the shortest trace.",
    )
    p.add_argument("config", metavar="CONFIG", nargs="?", help="check configuration (.toml)")
    _add_set(p)
    p.add_argument(
        "--suite",
        default=None,
        metavar="NAME",
        help="run a named suite of long checks instead of CONFIG (features: where each protocol's features "
        "meet; minutes to hours)",
    )
    p.add_argument("--only", action="append", default=[], metavar="ENTRY", help="with --suite: run this entry only")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress lines on stderr")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.add_argument("--chart", default=None, metavar="FILE", help="write a violation's sequence chart (SVG)")
    p.add_argument(
        "--disk",
        default=None,
        metavar="DIR",
        help="keep the visited set and the frontier in DIR, with checkpoints; run again to continue a stopped "
        "search (same as --set check.disk=DIR)",
    )
    p.set_defaults(func=cmd_check)


def cmd_check(args: argparse.Namespace) -> int:
    fabricsim = _api()
    if (args.config is None) == (args.suite is None):
        raise fabricsim.ConfigError("fabricsim check: give a CONFIG or --suite NAME (not both)")
    if args.only and args.suite is None:
        raise fabricsim.ConfigError("--only: applies with --suite only")
    if args.suite is not None:
        return _check_suite(args)
    if args.chart is not None:
        check_writable_file(args.chart, "--chart")
    overrides = list(args.overrides or [])
    if args.disk is not None:
        overrides.append(f"check.disk={json.dumps(args.disk)}")
    report = fabricsim.check(args.config, set=overrides, progress=not args.quiet)
    if args.chart and report.get("chart"):
        Path(args.chart).write_text(report["chart"])
    if args.json:
        print(json.dumps({k: v for k, v in report.items() if k not in ("chart", "trace_text")}))
    else:
        state = "ok" if report["ok"] else "VIOLATION"
        bound = "" if report["complete"] or not report["ok"] else " (bounded: not every state visited)"
        print(
            f"{report['protocol']}: {state}{bound}: {report['states']:,} states, {report['transitions']:,} "
            f"transitions, depth {report['depth']}, {report['seconds']:.2f} s "
            f"({report['states_per_s']:,.0f} states/s), peak memory {report['peak_rss_kb'] / 1024:.0f} MiB"
        )
        if report.get("resumed_from_depth") is not None:
            print(f"continued from the checkpoint at depth {report['resumed_from_depth']}")
        if report.get("checkpoint_depth") is not None:
            print(f"checkpoint at depth {report['checkpoint_depth']} kept: run the same command again to continue")
        if report["trace_text"]:
            print(report["trace_text"].rstrip())
        if report.get("coverage"):  # a table file's rows never fired, states never reached
            print(report["coverage"]["text"].rstrip())
        if args.chart and report.get("chart"):
            print(f"sequence chart: {args.chart}")
    if not report["ok"]:
        return EXIT_VIOLATION
    return EXIT_OK if report["complete"] else EXIT_INCOMPLETE


def _check_suite(args: argparse.Namespace) -> int:
    from . import check_suite

    if args.chart is not None:
        raise _api().ConfigError("--chart: applies to one CONFIG, not to --suite")
    results = check_suite.run(
        args.suite,
        only=args.only,
        disk=args.disk,
        overrides=args.overrides,
        progress=not args.quiet,
        out=(lambda line: None) if args.json else (lambda line: print(line, flush=True)),
    )
    if args.json:
        for r in results:
            print(json.dumps(r))
    statuses = {r["status"] for r in results}
    if "violation" in statuses:
        return EXIT_VIOLATION
    if "differs" in statuses:
        return EXIT_ERROR
    return EXIT_INCOMPLETE if "incomplete" in statuses else EXIT_OK


# -- export ---------------------------------------------------------------------------------
def add_export(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "export",
        help="write a table protocol as a Murphi model (for Rumur)",
        description="Write a protocol table file (FILE.tables) as a Murphi model with fabricsim's semantics "
        "(channels, initial states, enabled transitions, invariants, deadlock, undefined values), so that Rumur "
        "finds the states fabricsim's check finds. Check the model with "
        "`rumur --deadlock-detection off --output model.c model.m` (docs/protocol-tables.md).",
    )
    p.add_argument("table", metavar="FILE.tables", help="the protocol table file")
    p.add_argument("--murphi", action="store_true", required=True, help="write Murphi (the one format for now)")
    p.add_argument("--caches", type=int, default=2, metavar="N", help="instances of machine NAME[caches] (2)")
    p.add_argument("--directories", type=int, default=1, metavar="N", help="instances of NAME[directories] (1)")
    p.add_argument("--values", type=int, default=2, metavar="V", help="data values (2)")
    p.add_argument("--mutant", default=None, metavar="NAME", help="with the table's `mutant NAME:` rows in place")
    p.add_argument(
        "--symmetry",
        action="store_true",
        help="scalarsets for the replicated machines and the data values (Rumur: --symmetry-reduction exhaustive)",
    )
    p.add_argument("--no-deadlock", action="store_true", help="leave out fabricsim's deadlock invariant")
    p.add_argument("-o", "--output", default=None, metavar="OUT.m", help="write here (default: standard output)")
    p.set_defaults(func=cmd_export)


def cmd_export(args: argparse.Namespace) -> int:
    fabricsim = _api()
    for name in ("caches", "directories", "values"):
        if getattr(args, name) < 1:
            raise fabricsim.ConfigError(f"--{name} {getattr(args, name)}: expected 1 or more")
    if args.output is not None:
        check_writable_file(args.output, "--output")
    model = fabricsim._core.export_murphi(
        args.table,
        caches=args.caches,
        directories=args.directories,
        values=args.values,
        mutant=args.mutant,
        symmetry=args.symmetry,
        deadlock=not args.no_deadlock,
    )
    if args.output is None:
        sys.stdout.write(model)
    else:
        Path(args.output).write_text(model)
        print(f"{args.output}: Murphi model of {args.table}", file=sys.stderr)
    return EXIT_OK


# -- litmus ---------------------------------------------------------------------------------
def add_litmus(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "litmus",
        help="litmus tests: the memory model's verdict, or a protocol's outcomes against it",
        description="For each herd7 C litmus file (directories are searched recursively for *.litmus): "
        "the outcomes the memory model allows and the verdict of its condition; with --protocol, also every "
        "outcome the protocol can produce (exhaustively), which must be allowed; a failure prints the "
        "shortest interleaving that produces it, as fabricsim check prints a counterexample. The protocol's "
        "keys are its [protocol.NAME] table, as fabricsim run reads it (fabricsim protocols lists them), "
        "e.g. --protocol pcie --set variant=rc-opt --set nic=1 --mutant no-squash. Tests run in parallel; a "
        "file that cannot be read is reported and the others still run; with several files a summary "
        "follows. Exit code: 5 if a protocol observed a forbidden outcome (or did not finish), else 2 if a "
        "file could not be read or was refused, else 1 if a test was too large, else 0.",
    )
    p.add_argument("files", nargs="+", metavar="PATH", help="litmus files, or directories of *.litmus files")
    p.add_argument("--model", required=True, choices=["sc", "tso", "rc"])
    p.add_argument(
        "--mapping",
        default="standard",
        choices=["standard", "plain"],
        help="under tso, how C11 is compiled to x86: standard (a seq_cst store is a store and MFENCE; "
        "the default) or plain (every store a plain store)",
    )
    p.add_argument(
        "--protocol",
        default=None,
        metavar="NAME",
        help="a protocol family with cores for litmus programs: msi, mesi, cord or pcie",
    )
    p.add_argument(
        "--set",
        dest="overrides",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a key of the protocol's [protocol.NAME] table, e.g. --set variant=so (cord), --set nic=1 or "
        "--set mmio=rob (pcie), --set homes.x=1 (cord); may be repeated",
    )
    p.add_argument("--mutant", default=None, metavar="NAME", help="one of the protocol's mutants (fabricsim protocols)")
    p.add_argument(
        "--config",
        default=None,
        metavar="FILE",
        help="a configuration whose [protocol] table names the protocol (unless --protocol does) and gives its "
        "[protocol.NAME] keys; --set applies on top",
    )
    p.add_argument(
        "--chart", default=None, metavar="FILE", help="with one test: write a failure's sequence chart (SVG)"
    )
    p.add_argument("--json", action="store_true", help="one JSON object per test per line, naming its file")
    p.add_argument(
        "-j", "--jobs", type=int, default=None, metavar="N", help="tests run at once (default: one per core)"
    )
    p.set_defaults(func=cmd_litmus)


def _litmus_paths(paths: list[str]) -> list[str]:
    """The files to run: files as given, directories' *.litmus files (recursively, sorted)."""
    out: list[str] = []
    for f in paths:
        if os.path.isdir(f):
            found = sorted(str(p) for p in Path(f).rglob("*.litmus") if p.is_file())
            out.extend(found if found else [f])  # an empty directory is reported as unreadable
        else:
            out.append(f)
    return out


def _litmus_reason(message: str) -> str:
    """A message without its file, position and variable names: the reason it stands for."""
    import re

    head = message.split("; supported")[0]
    head = re.sub(r"^.*?:\d+(:\d+)?: ", "", head, count=1)
    parts = head.split("`")
    for i in range(1, len(parts), 2):
        if len(parts[i]) > 24 or any(c.isdigit() for c in parts[i]):
            parts[i] = "_"
    return re.sub(r"\d+", "N", "`".join(parts))


def _litmus_one(fabricsim: Any, path: str, args: argparse.Namespace, stop: Any) -> dict[str, Any]:
    """One file's result; errors become results with ``error`` and ``reason``."""
    try:
        r = fabricsim.litmus(
            path,
            model=args.model,
            protocol=args.protocol,
            mapping=args.mapping,
            stop=stop,
            set=args.overrides,
            mutant=args.mutant,
            config=args.config,
        )
    except fabricsim.ConfigError as exc:
        if os.path.isdir(path):
            msg = f"{path}: a directory without *.litmus files"
        else:
            msg = str(exc)
        return {"file": path, "error": msg, "kind": "refused", "reason": "refused: " + _litmus_reason(msg)}
    except fabricsim.Interrupted as exc:
        return {"file": path, "error": str(exc), "kind": "interrupted", "reason": "interrupted"}
    except RuntimeError as exc:
        msg = str(exc)
        kind = "too large" if "too large" in msg else "error"
        return {"file": path, "error": msg, "kind": kind, "reason": kind}
    return {"file": path, **r}


def _litmus_print(r: dict[str, Any], args: argparse.Namespace) -> None:
    if "error" in r:
        if r["kind"] == "interrupted":
            return
        if args.json:
            print(json.dumps(r), flush=True)
        _error(r["error"])
        return
    if args.json:
        print(json.dumps({k: v for k, v in r.items() if k != "chart"}), flush=True)
        return
    line = f"{r['test']:<20} {r['model']:<4} {r['verdict']:<10}"
    if "protocol" in r:
        line += (
            f" {r['protocol']}: {'ok' if r['ok'] else 'FAIL'} (observed {len(r['observed'])} of "
            f"{len(r['allowed'])} allowed outcomes, {r['states']} states)"
        )
        for o in r.get("forbidden_observed", []):
            line += f"\n    forbidden outcome observed: {o}"
        if r.get("violation"):
            line += f"\n    {r['violation']['kind']}: {r['violation']['detail']}"
        if r.get("trace_text"):
            line += "\n    shortest interleaving:\n" + textwrap.indent(r["trace_text"].rstrip(), "    ")
        if args.chart and r.get("chart"):
            Path(args.chart).write_text(r["chart"])
            line += f"\n    sequence chart: {args.chart}"
    print(line, flush=True)


def _litmus_summary(results: list[dict[str, Any]], files: int, args: argparse.Namespace) -> str:
    from collections import Counter

    tests = [r for r in results if "error" not in r]
    verdicts = Counter(r["verdict"] for r in tests)
    failures: Counter[str] = Counter(r["reason"] for r in results if "error" in r)
    label = next((r["protocol"] for r in tests if "protocol" in r), None)
    if label:
        for r in tests:
            if r["ok"]:
                continue
            if r.get("forbidden_observed"):
                failures[f"{label}: forbidden outcome observed"] += 1
            elif r.get("violation"):
                failures[f"{label}: {r['violation']['kind']}"] += 1
            else:
                failures[f"{label}: incomplete"] += 1
    text = f"summary: {files} files, {len(tests)} tests run under {args.model}"
    text += ": " + ", ".join(f"{n} {v}" for v, n in sorted(verdicts.items())) if verdicts else ""
    if label:
        ok = sum(1 for r in tests if r["ok"])
        text += f"; {label}: {ok} ok, {len(tests) - ok} not ok"
    unread = sum(1 for r in results if "error" in r and r["kind"] == "refused")
    text += f"; {unread} files refused (unreadable, not parsed, or refused by the protocol)"
    if failures:
        text += "\nfailures by reason:"
        for reason, n in sorted(failures.items(), key=lambda kv: (-kv[1], kv[0])):
            text += f"\n  {n:6}  {reason}"
    return text


def cmd_litmus(args: argparse.Namespace) -> int:
    import concurrent.futures as cf

    fabricsim = _api()
    paths = _litmus_paths(args.files)
    if args.chart is not None:
        if len(paths) != 1:
            raise fabricsim.ConfigError(f"--chart: applies to one litmus test, not {len(paths)}")
        if args.protocol is None and args.config is None:
            raise fabricsim.ConfigError("--chart: applies with --protocol NAME (or --config) only")
        check_writable_file(args.chart, "--chart")
    stop = fabricsim.StopToken()
    jobs = max(1, args.jobs or os.cpu_count() or 1)
    results: list[dict[str, Any]] = []
    pool = cf.ThreadPoolExecutor(max_workers=min(jobs, len(paths)))
    futures = [pool.submit(_litmus_one, fabricsim, p, args, stop) for p in paths]
    try:
        # In input order, so that the same files give the same output.
        for fut in futures:
            while True:
                try:
                    r = fut.result(timeout=0.1)
                    break
                except cf.TimeoutError:
                    continue
            results.append(r)
            _litmus_print(r, args)
    except KeyboardInterrupt:
        stop.set()
        pool.shutdown(wait=True, cancel_futures=True)
        done = [f.result() for f in futures[len(results) :] if f.done() and not f.cancelled()]
        for r in done:
            if r.get("kind") == "interrupted":
                print(f"interrupted: {r['error']}", file=sys.stderr)
        print(
            f"interrupted: {len(results)} of {len(paths)} files done; the running tests stopped: incomplete",
            file=sys.stderr,
        )
        return EXIT_INTERRUPTED
    pool.shutdown(wait=True)
    interrupted = [r for r in results if r.get("kind") == "interrupted"]
    for r in interrupted:
        print(f"interrupted: {r['error']}", file=sys.stderr)
    if len(paths) > 1:
        print(_litmus_summary(results, len(paths), args), file=sys.stderr if args.json else sys.stdout, flush=True)
    if interrupted:
        return EXIT_INTERRUPTED
    kinds = {r.get("kind") for r in results}
    if any("error" not in r and "protocol" in r and not r["ok"] for r in results):
        return EXIT_VIOLATION
    if "refused" in kinds:
        return EXIT_CONFIG
    if kinds & {"too large", "error"}:
        return EXIT_ERROR
    return EXIT_OK


# -- bench ----------------------------------------------------------------------------------
def add_bench(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "bench",
        help="measure the speed of the timing engine and fabric",
        description="Measure events/s of the timing engine and packet hops/s of the fabric.",
    )
    p.add_argument("--json", action="store_true", help="print the figures as JSON")
    p.add_argument("--quick", action="store_true", help="a shorter, less precise measurement")
    p.add_argument(
        "--sweep",
        action="store_true",
        help="also measure the parallel efficiency of a sweep on 2 local workers (about 30 s)",
    )
    p.set_defaults(func=cmd_bench)


def _flatten(value: Any, prefix: str = "") -> list[tuple[str, Any]]:
    if isinstance(value, Mapping):
        rows = []
        for key, item in value.items():
            rows.extend(_flatten(item, f"{prefix}.{key}" if prefix else str(key)))
        return rows
    return [(prefix, value)]


def _format_number(value: Any) -> str:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return str(value)
    if isinstance(value, int) or (abs(value) >= 1000 and float(value).is_integer()):
        return f"{int(value):,}"
    if abs(value) >= 1000:
        return f"{value:,.0f}"
    return f"{value:.4g}"


def format_bench(figures: Mapping[str, Any]) -> str:
    rows = [(key, _format_number(value)) for key, value in _flatten(figures)]
    if not rows:
        return "(no figures)"
    width = max(len(key) for key, _ in rows)
    vwidth = max(len(value) for _, value in rows)
    return "\n".join(f"{key:<{width}}  {value:>{vwidth}}" for key, value in rows)


def cmd_bench(args: argparse.Namespace) -> int:
    fabricsim = _api()
    figures = fabricsim.bench(quick=args.quick)
    if args.sweep:
        from .sweeps import parallel_efficiency

        figures["sweep"] = parallel_efficiency()
    if args.json:
        print(json.dumps(figures, indent=2))
    else:
        print(format_bench(figures))
    return EXIT_OK


# -- protocols ------------------------------------------------------------------------------
def add_protocols(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "protocols",
        help="list every protocol with its parameters and mutants",
        description="List every protocol family: what it is, what the [check] sizes mean for it, "
        "its [protocol.NAME] keys (type, default, doc; those a check reads) and its deliberately broken "
        "variants (mutants).",
    )
    p.add_argument("name", nargs="?", default=None, help="show one protocol only")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=cmd_protocols)


def format_protocol(f: Mapping[str, Any]) -> str:
    """One family as text, in the manner of sst-info."""
    lines = [f"{f['name']}: {f['about']}"]
    check = f["check"]
    sizes = ", ".join(f"{s['key']} = {s['means']}" for s in check["sizes"]) or "none"
    symmetry = "symmetry = true applies" if check["symmetry"] else "no scalarsets (symmetry does not apply)"
    if check.get("by"):
        lines.append(f"  [check]: {check['by']}")
    else:
        lines.append(f"  [check] sizes: {sizes}; {symmetry}")
    if check.get("model"):
        lines.append("  [check]: its checked cores take [protocol] model")
    params = check["params"]
    if params:
        lines.append(f"  [protocol.{f['name']}] keys a check reads (the others it accepts and does not read):")
        kw = max(len(p["key"]) for p in params)
        for p in params:
            default = f" (default {p['default']})" if p["default"] else ""
            lines.append(f"    {p['key']:<{kw}}  {p['type']}{default}: {p['doc']}")
    run = f.get("run")
    if run is None:
        lines.append("  [protocol] run: no timed machine (checked only)")
    else:
        drivers = ", ".join(run["drivers"])
        extra = [f"cache {run['cache']}"]
        if run["programs"]:
            extra.append("litmus programs")
        if run["core_front_end"]:
            extra.append("[protocol.core]")
        if run["interleave"]:
            extra.append("interleave")
        lines.append(f"  [protocol] run: drivers {drivers}; {', '.join(extra)}")
        run_params = run.get("params") or []
        if run_params:
            lines.append(f"  [protocol.{f['name']}] keys:")
            kw = max(len(p["key"]) for p in run_params)
            for p in run_params:
                default = f" (default {p['default']})" if p["default"] else ""
                doc = f": {p['doc']}" if p["doc"] else ""
                lines.append(f"    {p['key']:<{kw}}  {p['type']}{default}{doc}")
    lit = f.get("litmus") or {}
    if lit.get("programs"):
        keys = ", ".join(lit["keys"]) or "none"
        lines.append(f"  litmus: fabricsim litmus FILE --protocol {f['name']} (--set keys: {keys}; --mutant M)")
    elif lit:
        lines.append(f"  litmus: no cores for litmus programs: {lit['why_not']}")
    if f["mutants"]:
        lines.append("  mutants:")
        mw = max(len(m["name"]) for m in f["mutants"])
        for m in f["mutants"]:
            lines.append(f"    {m['name']:<{mw}}  {m['breaks']}")
    return "\n".join(lines)


def cmd_protocols(args: argparse.Namespace) -> int:
    families = _api().protocols()
    if args.name is not None:
        chosen = [f for f in families if f["name"] == args.name]
        if not chosen:
            names = ", ".join(f["name"] for f in families)
            _error(f"{args.name!r}: no such protocol; expected one of {names}")
            return EXIT_USAGE
        families = chosen
    if args.json:
        print(json.dumps(families, indent=2))
    else:
        print("\n\n".join(format_protocol(f) for f in families))
    return EXIT_OK


# -- examples -------------------------------------------------------------------------------
def add_examples(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "examples",
        help="run every example system and print its results",
        description="Run every example system (examples/*.toml) and print its results.",
    )
    p.add_argument("--out", default=None, metavar="DIR", help="write each result to DIR/<example>/")
    p.add_argument(
        "--dir",
        default=None,
        metavar="DIR",
        help="the example systems' folder (default: a checkout's examples/, or ./examples)",
    )
    p.add_argument("--quick", action="store_true", help="accepted for future use")
    p.add_argument("--quiet", "-q", action="store_true", help="no progress bar")
    p.set_defaults(func=cmd_examples)


def example_dirs() -> list[Path]:
    """Where example systems are looked for, in order."""
    here = Path(__file__).resolve()
    return [
        here.parents[2] / "examples",  # a checkout: <repo>/python/fabricsim/cli.py
        here.parent / "examples",  # a copy shipped inside the package
        Path.cwd() / "examples",  # an installed package run from the checkout
    ]


def find_examples() -> list[Path]:
    for directory in example_dirs():
        if directory.is_dir():
            files = sorted(directory.glob("*.toml"))
            if files:
                return files
    return []


def cmd_examples(args: argparse.Namespace) -> int:
    fabricsim = _api()
    if args.dir is not None:
        files = sorted(Path(args.dir).glob("*.toml"))
        if not files:
            _error(f"--dir {args.dir}: no example systems (*.toml) there; expected the examples/ folder of fabricsim")
            return EXIT_USAGE
    else:
        files = find_examples()
    if not files:
        searched = ", ".join(str(d) for d in example_dirs())
        _error(
            f"no example systems (*.toml) found; looked in {searched}. An installed wheel does not carry them: "
            "run from a fabricsim checkout, or give --dir DIR (the examples/ folder of fabricsim's source "
            "distribution or checkout)"
        )
        return EXIT_ERROR
    if args.out is not None:
        check_writable_dir(args.out, "--out")
    status = EXIT_OK
    for i, path in enumerate(files):
        if i:
            print()
        print(f"== {path.stem} ({path}) ==", flush=True)
        out = Path(args.out) / path.stem if args.out is not None else None
        try:
            result = fabricsim.run(str(path), out=out, progress=_progress(args))
        except fabricsim.ConfigError as exc:
            _error(str(exc))
            status = max(status, EXIT_CONFIG)
            continue
        except RuntimeError as exc:
            _error(f"{path}: {exc}")
            status = max(status, EXIT_ERROR)
            continue
        print(result.text.rstrip("\n"), flush=True)
    if args.out is not None:
        print(f"wrote {args.out}", file=sys.stderr)
    return status


# -- sweep ----------------------------------------------------------------------------------
def add_sweep(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "sweep",
        help="run a parameter sweep into a resumable SQLite store",
        description="Run every point of a sweep specification (TOML) not yet in the store. "
        "A killed sweep resumes where it stopped when run again.",
    )
    p.add_argument("spec", metavar="SPEC", help="sweep specification (.toml)")
    backend = p.add_mutually_exclusive_group()
    backend.add_argument(
        "--workers",
        type=int,
        default=None,
        metavar="N",
        help="local worker processes (default: one per core)",
    )
    backend.add_argument(
        "--dask",
        default=None,
        metavar="ADDRESS",
        help="run on a Dask cluster: a scheduler address, or 'local' for a LocalCluster",
    )
    p.add_argument("--db", default=None, metavar="FILE", help="SQLite store (default: SPEC with .db)")
    p.add_argument("--retry-failed", action="store_true", help="run points stored as failed again")
    p.add_argument("--quiet", "-q", action="store_true", help="no progress bar")
    p.set_defaults(func=cmd_sweep)


def cmd_sweep(args: argparse.Namespace) -> int:
    from . import sweeps as sweep_mod

    spec = sweep_mod.load_spec(args.spec)
    db = args.db or os.path.splitext(args.spec)[0] + ".db"
    if args.workers is not None and args.workers < 1:
        _error(f"--workers {args.workers}: expected at least 1")
        return EXIT_USAGE
    df = sweep_mod.execute(
        spec,
        db,
        workers=args.workers,
        dask=args.dask,
        progress=_progress(args),
        retry_failed=args.retry_failed,
    )
    ok = int((df["status"] == "ok").sum())
    print(f"{spec.name}: {ok} of {len(df)} points ok; results in {db} (fabricsim results {db})")
    return EXIT_OK if ok == len(df) else EXIT_ERROR


# -- results --------------------------------------------------------------------------------
def add_results(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "results",
        help="export a sweep store as CSV or Parquet",
        description="Print or export the points of a sweep store.",
    )
    p.add_argument("db", metavar="DB", help="SQLite store written by `fabricsim sweep`")
    p.add_argument("--sweep", default=None, help="only this sweep's points")
    fmt = p.add_mutually_exclusive_group()
    fmt.add_argument("--csv", default=None, metavar="FILE", help="write CSV ('-' for standard output)")
    fmt.add_argument("--parquet", default=None, metavar="FILE", help="write Parquet (needs pyarrow)")
    p.set_defaults(func=cmd_results)


def cmd_results(args: argparse.Namespace) -> int:
    fabricsim = _api()
    df = fabricsim.load(args.db, sweep=args.sweep)
    if args.parquet:
        try:
            df.to_parquet(args.parquet, index=False)
        except ImportError:
            _error("--parquet needs pyarrow: pip install pyarrow")
            return EXIT_ERROR
        print(f"wrote {len(df)} points to {args.parquet}", file=sys.stderr)
    elif args.csv and args.csv != "-":
        df.to_csv(args.csv, index=False)
        print(f"wrote {len(df)} points to {args.csv}", file=sys.stderr)
    else:
        df.to_csv(sys.stdout, index=False)
    return EXIT_OK


# -- plot -----------------------------------------------------------------------------------
def add_plot(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "plot",
        help="plot a metric of a sweep against a parameter",
        description="Plot one metric of a sweep store against one parameter (mean over seeds; "
        "failed points left out), one line per value of --by. Parameters with units are plotted "
        "by their numbers.",
    )
    p.add_argument("db", metavar="DB", help="SQLite store written by `fabricsim sweep`")
    p.add_argument("--x", required=True, metavar="PARAM", help="parameter on the x axis, e.g. workload.window")
    p.add_argument("--y", required=True, metavar="METRIC", help="metric on the y axis, e.g. throughput_GBps")
    p.add_argument("--by", default=None, metavar="PARAM", help="one line per value of this parameter")
    p.add_argument("--sweep", default=None, help="only this sweep's points")
    p.add_argument("--logx", action="store_true", help="logarithmic x axis (base 2)")
    p.add_argument("--logy", action="store_true", help="logarithmic y axis")
    p.add_argument(
        "-o", "--out", default=None, metavar="FILE", help="image to write (.svg, .png, .pdf); default DB-Y.svg"
    )
    p.set_defaults(func=cmd_plot)


def cmd_plot(args: argparse.Namespace) -> int:
    from .plotting import PlotError, plot

    fabricsim = _api()
    out = args.out or f"{os.path.splitext(args.db)[0]}-{args.y.replace('/', '_')}.svg"
    check_writable_file(out, "--out")
    try:
        ax = plot(fabricsim.load(args.db, sweep=args.sweep), args.x, args.y, by=args.by, logx=args.logx, logy=args.logy)
    except PlotError as exc:
        _error(f"{args.db}: {exc}")
        return EXIT_USAGE
    ax.figure.tight_layout()
    ax.figure.savefig(out)
    print(f"wrote {out}", file=sys.stderr)
    return EXIT_OK


# -- reproduce ------------------------------------------------------------------------------
def add_reproduce(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "reproduce",
        help="reproduce the seed papers' figures and write a report",
        description="Run the experiments of the named seeds or figures (e.g. esf, fig10, esf/fig16), "
        "write each figure's data, plot and a report comparing fabricsim with the paper.",
    )
    p.add_argument("names", nargs="*", metavar="SEED|FIGURE")
    p.add_argument("--all", action="store_true", help="every experiment")
    p.add_argument("--quick", action="store_true", help="reduced sizes (minutes, for CI)")
    p.add_argument("--out", default="reproduce", metavar="DIR", help="output folder (default: reproduce)")
    backend = p.add_mutually_exclusive_group()
    backend.add_argument("--workers", type=int, default=None, metavar="N")
    backend.add_argument("--dask", default=None, metavar="ADDRESS")
    p.add_argument("--quiet", "-q", action="store_true", help="no progress bars")
    p.add_argument(
        "--set",
        dest="overrides",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="sensitivity run: override one configuration value in every run of the selected experiments "
        "(validated like `run --set`; may be repeated); the report says so",
    )
    p.add_argument(
        "--no-robustness",
        dest="robustness",
        action="store_false",
        help="skip re-running each figure with the alternatives to its modelling choices",
    )
    p.add_argument(
        "--full-robustness",
        action="store_true",
        help="re-run the alternatives at full sizes (by default a full reproduction re-runs them at --quick sizes)",
    )
    p.set_defaults(func=cmd_reproduce)


def cmd_reproduce(args: argparse.Namespace) -> int:
    from .report import reproduce

    if not args.names and not args.all:
        _error("name seeds or figures to reproduce (e.g. esf, fig10), or give --all")
        return EXIT_CONFIG
    check_writable_dir(args.out, "--out")
    reproduce(
        args.names,
        everything=args.all,
        quick=args.quick,
        out=args.out,
        workers=args.workers,
        dask=args.dask,
        progress=_progress(args),
        overrides=args.overrides,
        robustness=args.robustness,
        full_robustness=args.full_robustness,
    )
    return EXIT_OK


# -- main -----------------------------------------------------------------------------------
#: Subcommands in the order `fabricsim --help` lists them.
COMMANDS: list[Callable[[argparse._SubParsersAction], None]] = [
    add_run,
    add_validate,
    add_sweep,
    add_results,
    add_plot,
    add_reproduce,
    add_check,
    add_export,
    add_litmus,
    add_protocols,
    add_bench,
    add_examples,
]


def _version() -> str:
    return _api().__version__


class _VersionAction(argparse.Action):
    def __init__(self, option_strings, dest=argparse.SUPPRESS, default=argparse.SUPPRESS, **kw):
        super().__init__(option_strings, dest=dest, default=default, nargs=0, **kw)

    def __call__(self, parser, namespace, values, option_string=None):
        print(f"fabricsim {_version()}")
        parser.exit()


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="fabricsim",
        description="Simulator and model checker for memory interconnect fabrics (CXL, PCIe).",
    )
    parser.add_argument("--version", action=_VersionAction, help="print the version and exit")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    for add in COMMANDS:
        add(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # --help, --version, usage errors
        return exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 2)
    try:
        return _guarded(args.func, args)
    except BrokenPipeError:
        # output piped into e.g. `head`: stop quietly, without a second error at exit
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return EXIT_ERROR


if __name__ == "__main__":
    sys.exit(main())
