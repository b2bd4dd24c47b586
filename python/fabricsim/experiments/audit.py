"""Can a figure's verdicts fail? Each row that agrees is re-judged on the figure's own data altered, one
column at a time, in ways that break most claims (reversed, flattened, scaled, alternated, shifted).
A row that no alteration turns to *disagrees* checks nothing the data could contradict: it holds by
construction, and its predicate must be rewritten.

``python -m fabricsim.experiments.audit [SEED|FIGURE ...] [--out DIR]`` audits the figures of a
``fabricsim reproduce --quick`` run already stored in ``DIR/fabricsim.db`` (re-running nothing that is
stored) and lists the rows that cannot fail."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator
from pathlib import Path

from .verdicts import DISAGREES


def alterations(data) -> Iterator[tuple[str, object]]:
    """(name, altered copy of ``data``): one numeric column changed at a time."""
    import numpy as np

    for col in data.columns:
        if data[col].dtype.kind == "b":  # a checker's verdict (complete, holds): flipped, and all one way
            for name, new in (("negated", ~data[col]), ("all true", True), ("all false", False)):
                d = data.copy()
                d[col] = new
                yield f"{col} {name}", d
            continue
        if data[col].dtype.kind not in "fiu":
            continue
        v = data[col].to_numpy(dtype=float)
        if len(v) == 0:
            continue
        n = len(v)
        mean = float(np.nanmean(v)) if np.isfinite(v).any() else 0.0
        alt = np.where(np.arange(n) % 2 == 0, 1.6, 0.4)
        ramp = np.linspace(0.5, 2.0, n)
        for name, new in (
            ("reversed", v[::-1].copy()),
            ("flattened to its mean", np.full(n, mean)),
            ("x 0.25", v * 0.25),
            ("x 4", v * 4),
            ("x 10", v * 10),
            ("alternating x1.6 / x0.4", v * alt),
            ("alternating x0.4 / x1.6", v * alt[::-1]),
            ("times a rising ramp", v * ramp),
            ("times a falling ramp", v * ramp[::-1]),
            ("+ 1", v + 1),
            ("set to 0", np.zeros(n)),
            ("negated", -v),
        ):
            d = data.copy()
            d[col] = new.astype(data[col].dtype) if data[col].dtype.kind in "iu" else new
            yield f"{col} {name}", d


def unbreakable(exp, data) -> list[str]:
    """The metrics of ``exp``'s rows that agree on ``data`` and that no alteration turns to disagrees."""
    base = {r.metric: r.verdict for r in exp.compare(data)}
    open_ = {m for m, v in base.items() if v != DISAGREES}
    for _, altered in alterations(data):
        if not open_:
            break
        try:
            rows = exp.compare(altered)
        except Exception:  # an alteration that a figure's analysis cannot take tells nothing about its rows
            continue
        open_ -= {r.metric for r in rows if r.verdict == DISAGREES}
    return sorted(open_)


def main(argv: list[str] | None = None) -> int:
    from ..report import run_experiment
    from . import select

    ap = argparse.ArgumentParser(prog="python -m fabricsim.experiments.audit", description=__doc__)
    ap.add_argument("names", nargs="*", metavar="SEED|FIGURE")
    ap.add_argument("--out", default="reproduce", help="the reproduce folder whose fabricsim.db is reused")
    args = ap.parse_args(argv)
    db = Path(args.out) / "fabricsim.db"
    bad = 0
    for exp in select(args.names, everything=not args.names):
        data = run_experiment(exp, True, db, workers=1, progress=False)
        stuck = unbreakable(exp, data)
        bad += len(stuck)
        print(f"{exp.id}: {'every agreeing row can fail' if not stuck else f'{len(stuck)} rows cannot fail'}")
        for m in stuck:
            print(f"    {m}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
