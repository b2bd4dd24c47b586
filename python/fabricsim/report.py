"""`fabricsim reproduce`: run the experiments, write per-figure data (CSV),
plots (PNG and SVG) and one report (Markdown and a self-contained HTML page)
with the paper's values beside fabricsim's, each row's source, tolerance or
predicate, computed verdict and explanation, and per figure a robustness
table: each modelling choice's alternative re-run, with the verdicts that
change."""

from __future__ import annotations

import base64
import html
import os
import time
from collections import Counter
from pathlib import Path
from typing import Any

from . import __version__
from .experiments import Experiment, not_reproduced, select
from .experiments.variants import Variant, check_sensitivity, sensitivity
from .experiments.verdicts import DISAGREES, SOURCE_KINDS, TREND, VERDICT_DEFINITIONS, VERDICTS, WITHIN, Row
from .store import Store, frame
from .sweeps import Sweep, execute

COLUMNS = ["metric", "paper", "source", "fabricsim", "ratio", "tolerance or predicate", "verdict", "explanation"]


def run_experiment(
    exp: Experiment,
    quick: bool,
    db: Path,
    workers: int | None = None,
    dask: str | None = None,
    progress: bool | None = None,
    variant: Variant | None = None,
    sweep: Sweep | None = None,
):
    """Run an experiment's sweep (``sweep`` if given, else its own, with ``variant`` applied) and analyse it."""
    sw = sweep if sweep is not None else exp.sweep(quick)
    if variant is not None:
        sw = variant.apply(sw)
    df = execute(sw, db, workers=workers, dask=dask, progress=progress)
    failed = df[df["status"] != "ok"]
    if len(failed):
        what = f" ({variant.name})" if variant else ""
        raise RuntimeError(f"{exp.id}{what}: {len(failed)} points failed; first: {failed['error'].iloc[0]}")
    return exp.analyze(df[df["status"] == "ok"].reset_index(drop=True))


def _plot(exp: Experiment, data, out: Path) -> tuple[Path, Path]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig = plt.figure(figsize=(12, 6), layout="constrained")
    exp.plot(data, fig)
    fig.text(0.99, 0.01, f"fabricsim {__version__}", ha="right", va="bottom", fontsize=7, alpha=0.6)
    png, svg = out.with_suffix(".png"), out.with_suffix(".svg")
    # Fixed metadata so the same data give the same files.
    fig.savefig(png, dpi=110, metadata={"Software": None})
    fig.savefig(svg, metadata={"Date": None, "Creator": None})
    plt.close(fig)
    return png, svg


def robustness_table(
    exp: Experiment, base_sweep: Sweep, base_rows: list[Row], quick: bool, db: Path, **run: Any
) -> list[dict[str, Any]]:
    """Re-run the figure with each alternative of each modelling choice; report the verdicts that change."""
    before = {r.metric: r.verdict for r in base_rows}
    out = []
    for choice in exp.choices:
        for alt in choice.alternatives:
            data = run_experiment(exp, quick, db, sweep=alt.apply(base_sweep), **run)
            rows = exp.compare(alt.remap(data))
            changed = [
                (r.metric, before.get(r.metric, "–"), r.verdict) for r in rows if before.get(r.metric) != r.verdict
            ]
            out.append(
                {
                    "choice": choice.name,
                    "ours": choice.ours,
                    "alternative": f"{alt.name}: {alt.description}",
                    "counts": Counter(r.verdict for r in rows),
                    "changed": changed,
                }
            )
    return out


def reproduce(
    names: list[str],
    everything: bool = False,
    quick: bool = False,
    out: str | os.PathLike = "reproduce",
    workers: int | None = None,
    dask: str | None = None,
    progress: bool | None = None,
    experiments: list[Experiment] | None = None,
    overrides: list[str] | None = None,
    robustness: bool = True,
    full_robustness: bool = False,
) -> Path:
    """Run the selected experiments and write the report; return the report's path.

    ``overrides`` (``KEY=VALUE``) make it a sensitivity run: applied to every run of every selected
    experiment, validated first, and named in the report. The robustness tables re-run each figure at
    --quick sizes (comparing with the quick run's own verdicts), unless ``full_robustness``: at full
    sizes they would take most of a full reproduction's time."""
    exps = experiments if experiments is not None else select(names, everything)
    overrides = list(overrides or [])
    variant = sensitivity(overrides)
    sweeps = [(e.id, e.sweep(quick)) for e in exps]
    robust_quick = robustness and not quick and not full_robustness
    robust_sweeps = [(e.id, e.sweep(True)) for e in exps] if robust_quick else sweeps
    if variant is not None:
        sweeps = check_sensitivity(variant, sweeps)  # every run validated before any runs
        robust_sweeps = check_sensitivity(variant, robust_sweeps) if robust_quick else sweeps
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    db = out / "fabricsim.db"
    run = {"workers": workers, "dask": dask, "progress": progress}
    sections: list[dict[str, Any]] = []
    t0 = time.perf_counter()
    for exp, (_, sw), (_, rsw) in zip(exps, sweeps, robust_sweeps):
        t = time.perf_counter()
        data = run_experiment(exp, quick, db, sweep=sw, **run)
        folder = out / exp.seed
        folder.mkdir(exist_ok=True)
        csv = folder / f"{exp.figure}.csv"
        data.to_csv(csv, index=False, float_format="%.6g")
        png, svg = _plot(exp, data, folder / exp.figure)
        rows = exp.compare(data)
        robust = None
        if robust_quick:
            quick_rows = exp.compare(run_experiment(exp, True, db, sweep=rsw, **run))
            robust = robustness_table(exp, rsw, quick_rows, True, db, **run)
        elif robustness:
            robust = robustness_table(exp, sw, rows, quick, db, **run)
        sections.append(
            {
                "exp": exp,
                "csv": csv,
                "png": png,
                "svg": svg,
                "rows": rows,
                "robust": robust,
                "robust_quick": robust_quick,
                "seconds": time.perf_counter() - t,
            }
        )
    total = time.perf_counter() - t0
    missing = not_reproduced(exps)
    (out / "report.md").write_text(_markdown(sections, quick, out, overrides, missing))
    (out / "report.html").write_text(_html(sections, quick, overrides, missing))
    print(_table_text(sections))
    print(f"\n{len(exps)} figures in {total:.1f} s; report: {out / 'report.md'} and {out / 'report.html'}")
    return out / "report.md"


# ---------------------------------------------------------------- formatting


def _fmt(v: float | None) -> str:
    if v is None:
        return "–"
    return f"{v:.3g}"


def _cells(r: Row) -> list[str]:
    """The row's cells, in COLUMNS order; every column for every row."""
    return [r.metric, _fmt(r.paper), str(r.source), _fmt(r.fabricsim), _fmt(r.ratio), r.criterion, r.verdict, r.why]


def _counts(rows: list[Row]) -> Counter:
    return Counter(r.verdict for r in rows)


def _summary_rows(sections) -> list[list[str]]:
    out = []
    for s in sections:
        c = _counts(s["rows"])
        if s["robust"] is None:
            robust = "not run"
        else:
            moved = sorted({m for alt in s["robust"] for m, _, _ in alt["changed"]})
            robust = (
                "every verdict survives every alternative"
                if not moved
                else f"{len(moved)} rows change under some alternative"
            )
        mut = len(s["exp"].mutants)
        out.append(
            [s["exp"].title, str(len(s["rows"])), str(c[WITHIN]), str(c[TREND]), str(c[DISAGREES]), str(mut), robust]
        )
    return out


SUMMARY_HEAD = ["figure", "rows", WITHIN, TREND, DISAGREES, "mutants (run by the tests)", "robustness"]


def _md_table(head: list[str], rows: list[list[str]]) -> list[str]:
    def esc(c: str) -> str:
        return c.replace("|", "\\|").replace("\n", " ")

    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join(esc(c) for c in r) + " |" for r in rows]
    return lines


def _robust_rows(robust) -> list[list[str]]:
    out = []
    for a in robust:
        c = a["counts"]
        changed = "; ".join(f"{m}: {b} → {v}" for m, b, v in a["changed"]) or "none"
        out.append([a["choice"], a["ours"], a["alternative"], f"{c[WITHIN]} / {c[TREND]} / {c[DISAGREES]}", changed])
    return out


ROBUST_QUICK = (
    "Re-run at --quick sizes; the verdicts that change are against the quick run's own "
    "(`fabricsim reproduce --full-robustness` re-runs them at full sizes)."
)
ROBUST_HEAD = ["choice", "ours", "alternative", "within / trend / disagrees", "verdicts that change"]


def _preamble(quick: bool, overrides: list[str]) -> list[str]:
    lines = [
        f"fabricsim {__version__}{' (quick sizes)' if quick else ''}. Every fabricsim value comes from simulation; "
        "the paper column is the reference only, never an output.",
    ]
    if overrides:
        lines.append(
            "**Sensitivity run**: every run of every experiment below had "
            + ", ".join(f"`--set {o}`" for o in overrides)
            + " applied; the verdicts describe that changed system, not fabricsim's reproduction."
        )
    return lines


def _markdown(sections, quick: bool, out: Path, overrides: list[str], missing: list[tuple[str, str]]) -> str:
    title = f"# fabricsim reproduction report{' (quick)' if quick else ''}{' — sensitivity run' if overrides else ''}"
    lines = [title, ""] + _preamble(quick, overrides) + ["", "Verdicts:", ""]
    lines += [f"- *{v}*: {VERDICT_DEFINITIONS[v]}." for v in VERDICTS]
    lines += ["", "Sources of paper values:", ""]
    lines += [f"- `{k}`: {d}." for k, d in SOURCE_KINDS.items()]
    lines += [
        "",
        "Each figure has reproduction mutants, changes that break its mechanism, which the test suite runs and "
        "which must turn the named rows to *disagrees*; and a robustness table re-running it with the "
        "alternatives to modelling choices the paper does not make.",
        "",
        "## Summary",
        "",
    ]
    lines += _md_table(SUMMARY_HEAD, _summary_rows(sections))
    for s in sections:
        exp: Experiment = s["exp"]
        lines += [
            "",
            f"## {exp.title}",
            "",
            f"![{exp.figure}]({s['png'].relative_to(out)})",
            "",
            f"Data: `{s['csv'].relative_to(out)}`; plot also as `{s['svg'].relative_to(out)}`; {s['seconds']:.1f} s.",
            "",
        ]
        lines += _md_table(COLUMNS, [_cells(r) for r in s["rows"]])
        if s["robust"]:
            lines += ["", "### Robustness to modelling choices", ""]
            if s["robust_quick"]:
                lines += [ROBUST_QUICK, ""]
            lines += _md_table(ROBUST_HEAD, _robust_rows(s["robust"]))
        if exp.mutants:
            lines += ["", "### Reproduction mutants (run by the tests)", ""]
            lines += [
                f"- `{m.name}`: {m.description}; must turn to *disagrees*: {'; '.join(m.flips)}" for m in exp.mutants
            ]
        if exp.notes:
            lines += ["", "<details><summary>How this figure is modelled</summary>", "", exp.notes, "", "</details>"]
    if missing:
        lines += ["", "## Not reproduced", ""]
        lines += _md_table(["result", "why not"], [list(m) for m in missing])
    return "\n".join(lines) + "\n"


def _table_text(sections) -> str:
    rows = [r for s in sections for r in s["rows"]]
    w = max([len(r.metric) for r in rows] + [6])
    lines = [f"{'figure':<11} {'metric':<{w}} {'paper':>7} {'fabricsim':>9} {'ratio':>6}  verdict"]
    for s in sections:
        for r in s["rows"]:
            lines.append(
                f"{r.figure:<11} {r.metric:<{w}} {_fmt(r.paper):>7} {_fmt(r.fabricsim):>9} "
                f"{_fmt(r.ratio):>6}  {r.verdict}"
            )
    c = _counts(rows)
    lines.append(f"\n{len(rows)} rows: {c[WITHIN]} {WITHIN}, {c[TREND]} {TREND}, {c[DISAGREES]} {DISAGREES}")
    return "\n".join(lines)


def _html_table(head: list[str], rows: list[list[str]], verdict_col: int | None = None) -> str:
    th = "".join(f"<th>{html.escape(h)}</th>" for h in head)
    body = []
    for r in rows:
        cells = []
        for i, c in enumerate(r):
            cls = f' class="{c.replace(" ", "-")}"' if i == verdict_col else ""
            cells.append(f"<td{cls}>{html.escape(c)}</td>")
        body.append("<tr>" + "".join(cells) + "</tr>")
    return f"<table><tr>{th}</tr>{''.join(body)}</table>"


def _html(sections, quick: bool, overrides: list[str], missing: list[tuple[str, str]]) -> str:
    title = f"fabricsim reproduction report{' (quick)' if quick else ''}{' — sensitivity run' if overrides else ''}"
    parts = [
        f"<!doctype html><html><head><meta charset='utf-8'><title>{html.escape(title)}</title>",
        "<style>body{font-family:sans-serif;max-width:1300px;margin:2em auto;padding:0 1em}"
        "table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #ccc;padding:4px 8px;font-size:85%;"
        "vertical-align:top}.within-tolerance{background:#d9f2d9}.same-trend{background:#fff3c4}"
        ".disagrees{background:#f8d0d0}.sensitivity{background:#fde2c4;padding:.5em 1em}"
        "img{max-width:100%}pre{white-space:pre-wrap;background:#f6f6f6;padding:1em}</style></head><body>",
        f"<h1>{html.escape(title)}</h1>",
    ]
    for i, line in enumerate(_preamble(quick, overrides)):
        cls = " class='sensitivity'" if i == 1 else ""
        parts.append(f"<p{cls}>{html.escape(line.replace('**', '').replace('`', ''))}</p>")
    parts.append("<h3>Verdicts</h3><ul>")
    parts += [
        f"<li><span class='{v.replace(' ', '-')}'>{v}</span>: {html.escape(VERDICT_DEFINITIONS[v])}</li>"
        for v in VERDICTS
    ]
    parts.append("</ul><h3>Sources of paper values</h3><ul>")
    parts += [f"<li><code>{k}</code>: {html.escape(d)}</li>" for k, d in SOURCE_KINDS.items()]
    parts.append("</ul><h2>Summary</h2>")
    parts.append(_html_table(SUMMARY_HEAD, _summary_rows(sections)))
    for s in sections:
        exp: Experiment = s["exp"]
        img = base64.b64encode(s["png"].read_bytes()).decode()
        parts += [
            f"<h2>{html.escape(exp.title)}</h2>",
            f"<img alt='{exp.figure}' src='data:image/png;base64,{img}'>",
            _html_table(COLUMNS, [_cells(r) for r in s["rows"]], verdict_col=COLUMNS.index("verdict")),
        ]
        if s["robust"]:
            parts.append("<h3>Robustness to modelling choices</h3>")
            if s["robust_quick"]:
                parts.append(f"<p>{html.escape(ROBUST_QUICK.replace('`', ''))}</p>")
            parts.append(_html_table(ROBUST_HEAD, _robust_rows(s["robust"])))
        if exp.mutants:
            parts.append("<h3>Reproduction mutants (run by the tests)</h3><ul>")
            parts += [
                f"<li><code>{html.escape(m.name)}</code>: {html.escape(m.description)}; must turn to "
                f"<i>disagrees</i>: {html.escape('; '.join(m.flips))}</li>"
                for m in exp.mutants
            ]
            parts.append("</ul>")
        parts.append(f"<h3>How this figure is modelled</h3><pre>{html.escape(exp.notes)}</pre>")
    if missing:
        parts += ["<h2>Not reproduced</h2>", _html_table(["result", "why not"], [list(m) for m in missing])]
    parts.append("</body></html>")
    return "\n".join(parts)


def results_frame(db: str | os.PathLike, sweep: str | None = None):
    with Store(db) as s:
        return frame(s.rows(sweep=sweep))
