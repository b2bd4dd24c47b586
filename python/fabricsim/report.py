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
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

from . import __version__
from .experiments import Experiment, not_reproduced, select
from .experiments.variants import Variant, check_sensitivity, sensitivity
from .experiments.verdicts import (
    BASES,
    CHECKER,
    DISAGREES,
    MAGNITUDE_FACTOR,
    MODEL,
    MODEL_TOLERANCE,
    SIMULATION,
    SOURCE_KINDS,
    TREND,
    VERDICT_DEFINITIONS,
    VERDICTS,
    WITHIN,
    Row,
)
from .store import Store, frame
from .sweeps import Sweep, execute

COLUMNS = [
    "metric",
    "paper",
    "source",
    "fabricsim",
    "ratio",
    "tolerance or predicate",
    "verdict",
    "explanation",
]


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
                    "counts": _counts(rows),
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
        # one line per finished figure, so that a log (no terminal, no progress bars) shows how far a long run is
        if progress is not False:
            print(
                f"[{len(sections)}/{len(exps)}] {exp.title}: {len(rows)} rows in {sections[-1]['seconds']:.1f} s",
                file=sys.stderr,
                flush=True,
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
    value = _fmt(r.fabricsim) + (f" (model: {r.model})" if r.basis == MODEL else "")
    if r.basis == CHECKER:
        value += " (checker)"
    return [r.metric, _fmt(r.paper), str(r.source), value, _fmt(r.ratio), r.criterion, r.label, r.why]


def _counts(rows: list[Row]) -> Counter:
    """Verdicts counted by basis: (basis, verdict) -> rows."""
    return Counter((r.basis, r.verdict) for r in rows)


def _count_cells(c: Counter) -> list[str]:
    sim = [str(c[(SIMULATION, v)]) for v in VERDICTS]
    other = [f"{c[(b, WITHIN)] + c[(b, TREND)]} / {c[(b, DISAGREES)]}" for b in (MODEL, CHECKER)]
    return sim + other


COUNT_HEAD = [
    f"simulated: {WITHIN}",
    f"simulated: {TREND}",
    f"simulated: {DISAGREES}",
    "model rows: agree / disagree",
    "checker rows: agree / disagree",
]


def _robust_words(s) -> str:
    exp = s["exp"]
    if not exp.choices:
        why = f" ({exp.no_choices_because})" if exp.no_choices_because else ""
        return f"no alternative modelling choices defined{why}"
    if s["robust"] is None:
        return "not run"
    moved = sorted({m for alt in s["robust"] for m, _, _ in alt["changed"]})
    n = sum(len(ch.alternatives) for ch in exp.choices)
    return (
        f"every verdict survives each of {n} alternative(s)"
        if not moved
        else f"{len(moved)} rows change under some of {n} alternative(s)"
    )


def _summary_rows(sections) -> list[list[str]]:
    out = []
    for s in sections:
        c = _counts(s["rows"])
        out.append(
            [s["exp"].title, str(len(s["rows"])), *_count_cells(c), str(len(s["exp"].mutants)), _robust_words(s)]
        )
    return out


SUMMARY_HEAD = ["figure", "rows", *COUNT_HEAD, "mutants (run by the tests)", "robustness"]
TOTALS_HEAD = ["seed", "figures", "rows", *COUNT_HEAD]


def _totals(sections) -> list[list[str]]:
    """One line per seed and one for all: the rows counted by basis and verdict."""
    out = []
    seeds = list(dict.fromkeys(s["exp"].seed for s in sections))
    for seed in [*seeds, None]:
        secs = [s for s in sections if seed is None or s["exp"].seed == seed]
        rows = [r for s in secs for r in s["rows"]]
        out.append([seed or "all", str(len(secs)), str(len(rows)), *_count_cells(_counts(rows))])
    return out


def _what_counts() -> list[str]:
    return [
        "Rows are counted by what fabricsim's value comes from, never together: "
        f"*{SIMULATION}* rows ({BASES[SIMULATION]}), *{MODEL}* rows ({BASES[MODEL]}) "
        f"and *{CHECKER}* rows ({BASES[CHECKER]}). Only simulation rows are "
        "reproductions of a measurement.",
        f"Tolerances follow one policy (docs/reproductions.md): the source's own uncertainty (a figure reading's, or "
        f"the stated precision of a text or table value) plus a model tolerance of {MODEL_TOLERANCE:.0%}; no row "
        f"chooses its own. A predicate row whose paper number is more than {MAGNITUDE_FACTOR:g}x from fabricsim's "
        "(or under half of it) disagrees even where the direction holds.",
    ]


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
        counts = " / ".join(str(sum(n for (_, v), n in c.items() if v == verdict)) for verdict in VERDICTS)
        out.append([a["choice"], a["ours"], a["alternative"], counts, changed])
    return out


ROBUST_QUICK = (
    "Re-run at --quick sizes; the verdicts that change are against the quick run's own "
    "(`fabricsim reproduce --full-robustness` re-runs them at full sizes)."
)
ROBUST_HEAD = ["choice", "ours", "alternative", "within / trend / disagrees", "verdicts that change"]


def _preamble(quick: bool, overrides: list[str]) -> list[str]:
    lines = [
        f"fabricsim {__version__}{' (quick sizes)' if quick else ''}. Every fabricsim value comes from fabricsim: a "
        "simulation, or where a row says so an analytic model or the checker; the paper column is the reference "
        "only, never an output.",
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
    lines += [""] + _what_counts() + ["", "## Totals", ""]
    lines += _md_table(TOTALS_HEAD, _totals(sections))
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
            f"Robustness: {_robust_words(s)}.",
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
    """The terminal's summary: one line per figure, then the totals per seed (every row is in report.md)."""
    head = ["figure", "rows", "within", "trend", "disagrees", "model ok/no", "checker ok/no"]
    lines = []
    body = [[s["exp"].title, str(len(s["rows"])), *_count_cells(_counts(s["rows"]))] for s in sections]
    totals = [[f"{t[0]}: {t[1]} figures", *t[2:]] for t in _totals(sections)]
    w = max(len(r[0]) for r in [*body, *totals, head])
    fmt = f"{{:<{w}}} {{:>5}} {{:>7}} {{:>6}} {{:>10}} {{:>12}} {{:>14}}"
    lines.append(fmt.format(*head))
    lines += [fmt.format(*r) for r in body]
    lines += ["", fmt.format("totals", *head[1:])]
    lines += [fmt.format(*r) for r in totals]
    return "\n".join(lines)


def _verdict_class(label: str) -> str:
    return label.split(" (")[0].replace(" ", "-")


def _html_table(
    head: list[str], rows: list[list[str]], verdict_col: int | None = None, links: list[str] | None = None
) -> str:
    th = "".join(f"<th>{html.escape(h)}</th>" for h in head)
    body = []
    for k, r in enumerate(rows):
        cells = []
        for i, c in enumerate(r):
            cls = f' class="{_verdict_class(c)}"' if i == verdict_col else ""
            text = html.escape(c)
            if i == 0 and links:
                text = f"<a href='#{links[k]}'>{text}</a>"
            cells.append(f"<td{cls}>{text}</td>")
        row_cls = f" class='row-{_verdict_class(r[verdict_col])}'" if verdict_col is not None else ""
        body.append(f"<tr{row_cls}>" + "".join(cells) + "</tr>")
    return f"<table><tr>{th}</tr>{''.join(body)}</table>"


def _anchor(exp: Experiment) -> str:
    return exp.id.replace("/", "-")


def _html(sections, quick: bool, overrides: list[str], missing: list[tuple[str, str]]) -> str:
    title = f"fabricsim reproduction report{' (quick)' if quick else ''}{' — sensitivity run' if overrides else ''}"
    parts = [
        f"<!doctype html><html><head><meta charset='utf-8'><title>{html.escape(title)}</title>",
        "<style>body{font-family:sans-serif;max-width:1300px;margin:2em auto;padding:0 1em}"
        "table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #ccc;padding:4px 8px;font-size:85%;"
        "vertical-align:top}.within-tolerance{background:#d9f2d9}.same-trend{background:#fff3c4}"
        ".disagrees{background:#f8d0d0}.sensitivity{background:#fde2c4;padding:.5em 1em}"
        "img{max-width:100%}pre{white-space:pre-wrap;background:#f6f6f6;padding:1em}"
        "body.only-disagrees tr.row-within-tolerance,body.only-disagrees tr.row-same-trend{display:none}"
        "</style></head><body>",
        f"<h1>{html.escape(title)}</h1>",
        "<h2>Totals</h2>",
        _html_table(TOTALS_HEAD, _totals(sections)),
        "<p><label><input type='checkbox' onchange=\"document.body.classList.toggle('only-disagrees', this.checked)\">"
        " show only the rows that disagree</label></p>",
    ]
    for i, line in enumerate(_preamble(quick, overrides)):
        cls = " class='sensitivity'" if i == 1 else ""
        parts.append(f"<p{cls}>{html.escape(line.replace('**', '').replace('`', ''))}</p>")
    parts.append("<h3>Verdicts</h3><ul>")
    parts += [
        f"<li><span class='{v.replace(' ', '-')}'>{v}</span>: {html.escape(VERDICT_DEFINITIONS[v])}</li>"
        for v in VERDICTS
    ]
    parts.append("</ul>")
    parts += [f"<p>{html.escape(line.replace('*', ''))}</p>" for line in _what_counts()]
    parts.append("<h3>Sources of paper values</h3><ul>")
    parts += [f"<li><code>{k}</code>: {html.escape(d)}</li>" for k, d in SOURCE_KINDS.items()]
    parts.append("</ul><h2>Summary</h2>")
    parts.append(_html_table(SUMMARY_HEAD, _summary_rows(sections), links=[_anchor(s["exp"]) for s in sections]))
    for s in sections:
        exp: Experiment = s["exp"]
        img = base64.b64encode(s["png"].read_bytes()).decode()
        parts += [
            f"<h2 id='{_anchor(exp)}'>{html.escape(exp.title)}</h2>",
            f"<p>Robustness: {html.escape(_robust_words(s))}.</p>",
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
