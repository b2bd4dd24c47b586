"""`fabricsim reproduce`: run the experiments, write per-figure data (CSV),
plots (PNG and SVG) and one report (Markdown and a self-contained HTML page)
with the paper's values beside fabricsim's."""

from __future__ import annotations

import base64
import html
import os
import time
from pathlib import Path
from typing import Any

from . import __version__
from .experiments import Comparison, Experiment, select
from .store import Store, frame
from .sweeps import execute


def run_experiment(
    exp: Experiment,
    quick: bool,
    db: Path,
    workers: int | None,
    dask: str | None,
    progress: bool | None,
):
    sw = exp.sweep(quick)
    df = execute(sw, db, workers=workers, dask=dask, progress=progress)
    failed = df[df["status"] != "ok"]
    if len(failed):
        raise RuntimeError(f"{exp.id}: {len(failed)} points failed; first: {failed['error'].iloc[0]}")
    return exp.analyze(df[df["status"] == "ok"].reset_index(drop=True))


def _plot(exp: Experiment, data, out: Path) -> tuple[Path, Path]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig = plt.figure(figsize=(9, 5.5))
    exp.plot(data, fig)
    fig.text(0.99, 0.01, f"fabricsim {__version__}", ha="right", va="bottom", fontsize=7, alpha=0.6)
    fig.tight_layout()
    png, svg = out.with_suffix(".png"), out.with_suffix(".svg")
    # Fixed metadata so the same data give the same files.
    fig.savefig(png, dpi=110, metadata={"Software": None})
    fig.savefig(svg, metadata={"Date": None, "Creator": None})
    plt.close(fig)
    return png, svg


def reproduce(
    names: list[str],
    everything: bool = False,
    quick: bool = False,
    out: str | os.PathLike = "reproduce",
    workers: int | None = None,
    dask: str | None = None,
    progress: bool | None = None,
    experiments: list[Experiment] | None = None,
) -> Path:
    """Run the selected experiments and write the report; return the report's path."""
    exps = experiments if experiments is not None else select(names, everything)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    db = out / "fabricsim.db"
    sections: list[dict[str, Any]] = []
    t0 = time.perf_counter()
    for exp in exps:
        t = time.perf_counter()
        data = run_experiment(exp, quick, db, workers, dask, progress)
        folder = out / exp.seed
        folder.mkdir(exist_ok=True)
        csv = folder / f"{exp.figure}.csv"
        data.to_csv(csv, index=False, float_format="%.6g")
        png, svg = _plot(exp, data, folder / exp.figure)
        rows = exp.compare(data)
        sections.append(
            {
                "exp": exp,
                "csv": csv,
                "png": png,
                "svg": svg,
                "rows": rows,
                "seconds": time.perf_counter() - t,
            }
        )
    total = time.perf_counter() - t0
    md = _markdown(sections, quick, out)
    (out / "report.md").write_text(md)
    (out / "report.html").write_text(_html(sections, quick))
    print(_table_text([r for s in sections for r in s["rows"]]))
    print(f"\n{len(exps)} figures in {total:.1f} s; report: {out / 'report.md'} and {out / 'report.html'}")
    return out / "report.md"


def _fmt(v: float | None) -> str:
    if v is None:
        return "–"
    return f"{v:.3g}"


def _rows_md(rows: list[Comparison]) -> list[str]:
    lines = [
        "| figure | metric | paper | fabricsim | ratio | verdict | explanation |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r.figure} | {r.metric} | {_fmt(r.paper)} | {_fmt(r.fabricsim)} | {_fmt(r.ratio)} | "
            f"{r.verdict} | {r.explanation if r.verdict != 'within tolerance' else ''} |"
        )
    return lines


def _table_text(rows: list[Comparison]) -> str:
    w = max([len(r.metric) for r in rows] + [6])
    lines = [f"{'figure':<11} {'metric':<{w}} {'paper':>7} {'fabricsim':>9} {'ratio':>6}  verdict"]
    for r in rows:
        lines.append(
            f"{r.figure:<11} {r.metric:<{w}} {_fmt(r.paper):>7} {_fmt(r.fabricsim):>9} {_fmt(r.ratio):>6}  {r.verdict}"
        )
    return "\n".join(lines)


def _markdown(sections, quick: bool, out: Path) -> str:
    lines = [
        f"# fabricsim reproduction report{' (quick)' if quick else ''}",
        "",
        f"fabricsim {__version__}. Every fabricsim value below comes from simulation; the paper column "
        "is the reference only. Verdicts: *within tolerance* (|ratio − 1| within the row's tolerance), "
        "*same trend* (the paper's qualitative statement holds), *disagrees*.",
        "",
        "## Summary",
        "",
    ]
    lines += _rows_md([r for s in sections for r in s["rows"]])
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
        lines += _rows_md(s["rows"])
        if exp.notes:
            lines += [
                "",
                "<details><summary>How this figure is modelled</summary>",
                "",
                exp.notes,
                "",
                "</details>",
            ]
    return "\n".join(lines) + "\n"


def _html(sections, quick: bool) -> str:
    def table(rows: list[Comparison]) -> str:
        head = "".join(
            f"<th>{h}</th>" for h in ["figure", "metric", "paper", "fabricsim", "ratio", "verdict", "explanation"]
        )
        body = []
        for r in rows:
            cls = r.verdict.replace(" ", "-")
            expl = r.explanation if r.verdict != "within tolerance" else ""
            body.append(
                "<tr>"
                + "".join(
                    f"<td>{html.escape(str(c))}</td>"
                    for c in [r.figure, r.metric, _fmt(r.paper), _fmt(r.fabricsim), _fmt(r.ratio)]
                )
                + f'<td class="{cls}">{r.verdict}</td><td>{html.escape(expl)}</td></tr>'
            )
        return f"<table><tr>{head}</tr>{''.join(body)}</table>"

    parts = [
        "<!doctype html><html><head><meta charset='utf-8'><title>fabricsim reproduction report</title>",
        "<style>body{font-family:sans-serif;max-width:1100px;margin:2em auto;padding:0 1em}"
        "table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #ccc;padding:4px 8px;font-size:90%}"
        ".within-tolerance{background:#d9f2d9}.same-trend{background:#fff3c4}.disagrees{background:#f8d0d0}"
        "img{max-width:100%}pre{white-space:pre-wrap;background:#f6f6f6;padding:1em}</style></head><body>",
        f"<h1>fabricsim reproduction report{' (quick)' if quick else ''}</h1>",
        f"<p>fabricsim {__version__}. Every fabricsim value comes from simulation; the paper column is the "
        "reference only.</p><h2>Summary</h2>",
        table([r for s in sections for r in s["rows"]]),
    ]
    for s in sections:
        exp: Experiment = s["exp"]
        img = base64.b64encode(s["png"].read_bytes()).decode()
        parts += [
            f"<h2>{html.escape(exp.title)}</h2>",
            f"<img alt='{exp.figure}' src='data:image/png;base64,{img}'>",
            table(s["rows"]),
            f"<pre>{html.escape(exp.notes)}</pre>",
        ]
    parts.append("</body></html>")
    return "\n".join(parts)


def results_frame(db: str | os.PathLike, sweep: str | None = None):
    with Store(db) as s:
        return frame(s.rows(sweep=sweep))
