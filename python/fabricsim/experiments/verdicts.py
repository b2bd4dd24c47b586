"""Rows of a reproduction report and how their verdicts are computed.

A row compares one thing fabricsim simulated with one thing the paper says.
Its verdict is computed from the simulated data, never declared:

- a **tolerance** row compares a value with the paper's value: *within
  tolerance* if ``|fabricsim / paper - 1| <= rel``, else *disagrees*; the
  tolerance follows from the source by one written policy
  (:func:`policy_tolerance`), never from the row;
- a **predicate** row evaluates a named predicate over the simulated series
  that encodes the paper's whole claim (monotone in x, flat within ε,
  approaching a limit, an ordering, its exceptions ...): *same trend* if it
  holds, else *disagrees*; where the paper states a number, the row also
  compares the magnitude: more than 2x from it (or under half of it) is
  *disagrees*, "direction holds, magnitude off by Nx".

A row also says what fabricsim's value comes from (its ``basis``): a
simulation, an analytic model over simulated inputs, or the model checker.
The three are counted apart in every summary.

Every row also says where the paper's value or claim comes from (a
:class:`Source`) and carries an explanation of the mechanism behind it.
See ``docs/reproductions.md`` for how to write a figure's rows.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

WITHIN = "within tolerance"
TREND = "same trend"
DISAGREES = "disagrees"
VERDICTS = (WITHIN, TREND, DISAGREES)

VERDICT_DEFINITIONS = {
    WITHIN: "fabricsim's value is within the policy tolerance of the paper's value (the source's own uncertainty "
    "plus the model tolerance; the row shows the derivation)",
    TREND: "the row's predicate, which encodes the paper's whole claim, holds on fabricsim's data, and where the "
    "paper states a number fabricsim's is within 2x of it",
    DISAGREES: "the value is outside the tolerance, the predicate does not hold, or the magnitude is more than 2x off",
}

#: what fabricsim's value of a row comes from; counted apart in every summary
SIMULATION = "simulation"
MODEL = "model"
CHECKER = "checker"
BASES = {
    SIMULATION: "a timed simulation",
    MODEL: "an analytic model (MVA, Little's law, a composition formula ...) over simulated or stated inputs: "
    "a model, not a simulation",
    CHECKER: "the model checker or the litmus oracle (states explored, mutants caught, outcomes allowed)",
}

#: The tolerance every value comparison starts from, written before any value was seen: a simulator of
#: another machine reproduces a paper's measurement no better than the paper's own simulator matched its
#: hardware (ESF's validation: errors up to 12 %), rounded up. The source's own uncertainty is added to it.
MODEL_TOLERANCE = 0.15
#: A predicate row whose paper number is this far from fabricsim's (either way) disagrees on magnitude.
MAGNITUDE_FACTOR = 2.0

SOURCE_KINDS = {
    "text": "stated in the paper's text (quoted, with its section)",
    "figure": "read off one of the paper's plots, with the reading's uncertainty",
    "table": "printed in one of the paper's tables",
    "bound": "a limit the paper states (such as 'N x'): compared as a limit, never as a value at every point",
}


@dataclass(frozen=True)
class Source:
    """Where a paper value or claim comes from."""

    kind: str
    where: str
    quote: str = ""
    #: figure readings: the reading's uncertainty (absolute, in the row's units)
    uncertainty: float | None = None
    #: text and table values: the stated precision (absolute, in the row's units) when the paper's value is not
    #: written with its own digits (a percentage given as a fraction, a value rounded to tens ...); default: half
    #: a unit of the value's last digit
    precision: float | None = None

    def __post_init__(self) -> None:
        if self.kind not in SOURCE_KINDS:
            raise ValueError(f"source kind {self.kind!r}: expected one of {', '.join(SOURCE_KINDS)}")
        if self.kind in ("text", "bound") and not self.quote:
            raise ValueError(f"a {self.kind} source needs a quote")
        if self.kind == "figure" and self.uncertainty is None:
            raise ValueError("a figure reading needs its uncertainty")

    def __str__(self) -> str:
        s = f"{self.kind}, {self.where}"
        if self.quote:
            s += f': "{self.quote}"'
        if self.uncertainty is not None:
            s += f" (read ±{self.uncertainty:g})"
        return s


def text(where: str, quote: str, precision: float | None = None) -> Source:
    return Source("text", where, quote, precision=precision)


def bound(where: str, quote: str) -> Source:
    return Source("bound", where, quote)


def figure(where: str, uncertainty: float, quote: str = "") -> Source:
    return Source("figure", where, quote, uncertainty)


def table(where: str, precision: float | None = None) -> Source:
    return Source("table", where, precision=precision)


def _stated_precision(value: float) -> float:
    """Half a unit of the last non-zero digit of ``value`` as written (37 -> 0.5, 2.5 -> 0.05, 0.07 -> 0.005),
    at most 5 % of the value: a trailing zero may be significant (10 % typed as 0.1 was stated to ±0.5 %, not
    ±5 %), and a single digit is read as two significant ones."""
    v = abs(float(value))
    if v == 0 or not math.isfinite(v):
        return 0.0
    mant, _, exp = f"{v:.15g}".lower().partition("e")
    whole, _, frac = mant.partition(".")
    frac = frac.rstrip("0")
    if frac:
        last = 0.5 * 10 ** -len(frac)
    else:
        last = 0.5 * 10 ** (len(whole) - len(whole.rstrip("0")))
    if exp:
        last *= 10 ** int(exp)
    return min(last, 0.05 * v)


def policy_tolerance(source: Source, paper: float) -> tuple[float, str]:
    """The tolerance of a value comparison, from its source alone: the reading's uncertainty (figures) or the
    stated precision (text, tables), relative to the paper's value, plus :data:`MODEL_TOLERANCE`. Returns the
    relative tolerance and how it was derived."""
    if source.kind == "bound":
        raise ValueError(f"{source}: a bound is compared as a limit (approaches, at_limit), never with a tolerance")
    if source.kind == "figure":
        own, what = source.uncertainty, f"reading ±{source.uncertainty:g}"
    else:
        own = source.precision if source.precision is not None else _stated_precision(paper)
        what = f"stated to ±{own:g}"
    rel = abs(own) / abs(paper) + MODEL_TOLERANCE
    return rel, f"{what} of {paper:g} ({abs(own) / abs(paper):.0%}) + model {MODEL_TOLERANCE:.0%}"


@dataclass(frozen=True)
class Tolerance:
    """A value comparison. Its width is not the row's to choose: :func:`policy_tolerance` derives it from the
    row's source when the row is built."""

    def __str__(self) -> str:
        return "within the policy tolerance of the paper"


@dataclass(frozen=True)
class Predicate:
    """A claim evaluated on simulated data: its words, whether it held, and the numbers that decided."""

    words: str
    holds: bool
    detail: str = ""

    def __str__(self) -> str:
        return self.words


@dataclass
class Row:
    """One row of a reproduction report."""

    figure: str
    metric: str
    paper: float | None
    source: Source
    fabricsim: float | None
    check: Tolerance | Predicate
    #: the mechanism behind the value or claim; shown on every row
    explanation: str
    #: why fabricsim's default system disagrees, when it does (found by investigation)
    if_disagrees: str = ""
    #: what fabricsim's value comes from: SIMULATION, MODEL or CHECKER
    basis: str = SIMULATION
    #: for a MODEL row: which model, over which inputs
    model: str = ""

    def __post_init__(self) -> None:
        if not self.explanation:
            raise ValueError(f"{self.figure} {self.metric}: every row needs an explanation")
        if self.basis not in BASES:
            raise ValueError(f"{self.figure} {self.metric}: basis {self.basis!r}: expected one of {', '.join(BASES)}")
        if self.basis == MODEL and not self.model:
            raise ValueError(f"{self.figure} {self.metric}: a model row names its model")
        self.rel: float | None = None
        self.tolerance_why = ""
        if isinstance(self.check, Tolerance):
            if self.paper is None or self.fabricsim is None or self.paper == 0:
                raise ValueError(
                    f"{self.figure} {self.metric}: a tolerance row needs both values and a non-zero paper value"
                )
            self.rel, self.tolerance_why = policy_tolerance(self.source, self.paper)

    @property
    def ratio(self) -> float | None:
        if self.paper in (None, 0) or self.fabricsim is None:
            return None
        return self.fabricsim / self.paper

    @property
    def magnitude_off(self) -> float | None:
        """For a predicate row with a paper number: how many times off fabricsim's value is, when it is more
        than :data:`MAGNITUDE_FACTOR` either way (or of the other sign); else None."""
        if isinstance(self.check, Tolerance) or self.paper in (None, 0) or self.fabricsim is None:
            return None
        r = self.fabricsim / self.paper
        if not math.isfinite(r) or r <= 0:
            return math.inf
        off = max(r, 1 / r)
        return off if off > MAGNITUDE_FACTOR else None

    @property
    def verdict(self) -> str:
        if isinstance(self.check, Tolerance):
            r = self.ratio
            return WITHIN if r is not None and abs(r - 1.0) <= self.rel + 1e-12 else DISAGREES
        return TREND if self.check.holds and self.magnitude_off is None else DISAGREES

    @property
    def label(self) -> str:
        """The verdict as shown: a model's or the checker's verdict names its basis, so it is never read as a
        simulation's."""
        return self.verdict if self.basis == SIMULATION else f"{self.verdict} ({self.basis})"

    @property
    def criterion(self) -> str:
        """The tolerance or the predicate in words, with the deciding numbers."""
        if isinstance(self.check, Tolerance):
            return f"within ±{self.rel:.0%} of the paper ({self.tolerance_why})"
        words = f"{self.check.words} [{self.check.detail}]" if self.check.detail else self.check.words
        if self.paper not in (None, 0) and self.fabricsim is not None:
            off = self.magnitude_off
            words += (
                f"; magnitude: within {MAGNITUDE_FACTOR:g}x of the paper's {self.paper:.3g}"
                if off is None
                else f"; {'direction holds, ' if self.check.holds else ''}magnitude off by "
                f"{'a sign' if math.isinf(off) else f'{off:.1f}x'} (fabricsim {self.fabricsim:.3g}, "
                f"paper {self.paper:.3g})"
            )
        return words

    @property
    def why(self) -> str:
        if self.verdict == DISAGREES and self.if_disagrees:
            return f"{self.explanation} Disagrees because: {self.if_disagrees}"
        return self.explanation


# ---------------------------------------------------------------- predicates
# Each returns a Predicate evaluated on fabricsim's numbers; the words say the
# claim, the detail shows the numbers that decided it.


def _fmt(v: float) -> str:
    return f"{v:.3g}"


class TooFewPoints(ValueError):
    """A trend over fewer than two distinct points holds by construction: the figure must be fixed, not judged."""


def _invalid(ys: Sequence[float], words: str, at_least: int = 2, xs: Sequence | None = None) -> Predicate | None:
    """Refuse (raise) a predicate over fewer than ``at_least`` distinct x (or, without x, fewer points); one
    over a NaN or infinite value does not hold."""
    n = len(set(map(_key, xs))) if xs is not None else len(ys)
    if n < at_least or len(ys) < at_least:
        raise TooFewPoints(f"{words!r}: over {n} distinct point(s); a claim needs at least {at_least}")
    if not all(math.isfinite(y) for y in ys):
        return Predicate(words, False, "a value is NaN or infinite")
    return None


def _key(x):
    try:
        hash(x)
        return x
    except TypeError:
        return repr(x)


def _series(xs: Sequence, ys: Sequence[float]) -> str:
    return ", ".join(f"{x}: {_fmt(y)}" for x, y in zip(xs, ys))


def monotone(
    xs: Sequence,
    ys: Sequence[float],
    increasing: bool = True,
    eps: float = 0.0,
    what: str = "",
    min_change: float = 0.0,
) -> Predicate:
    """Each step moves in the claimed direction; a step against it of at most ``eps`` (relative) is tolerated,
    and ``eps = 0`` asks for a strict change at every step. ``min_change``: the whole series must move by at
    least this fraction of its first value, so a trend is not a rounding error."""
    bad = _invalid(ys, f"{what + ' ' if what else ''}{'rises' if increasing else 'falls'} with x", xs=xs)
    if bad:
        return bad
    steps = list(zip(ys, ys[1:]))
    if eps == 0:
        ok = all((b > a) if increasing else (b < a) for a, b in steps)
        how = "strictly "
    else:
        ok = all(((b - a) if increasing else (a - b)) >= -eps * max(abs(a), 1e-12) for a, b in steps)
        how = f"(steps against it ≤ {eps:.0%}) "
    change = (ys[-1] - ys[0]) / abs(ys[0]) if ys[0] else float("inf")
    moved = (change if increasing else -change) >= min_change
    words = f"{what + ' ' if what else ''}{how}{'rises' if increasing else 'falls'} with x"
    if min_change:
        words += f", by ≥ {min_change:.0%} overall"
    detail = _series(xs, ys) + ("" if moved else f"; moves only {change:+.1%} overall")
    return Predicate(words, ok and moved, detail)


def flat(xs: Sequence, ys: Sequence[float], eps: float, what: str = "") -> Predicate:
    """Flat: the largest value is at most ``1 + eps`` times the smallest."""
    bad = _invalid(ys, f"{what + ' ' if what else ''}flat: max / min - 1 ≤ {eps:.0%}", xs=xs)
    if bad:
        return bad
    lo, hi = min(ys), max(ys)
    spread = hi / lo - 1 if lo > 0 else float("inf")
    return Predicate(
        f"{what + ' ' if what else ''}flat: max / min - 1 ≤ {eps:.0%}",
        spread <= eps,
        f"max / min - 1 = {spread:.1%} over {len(ys)} points",
    )


def all_of(words: str, parts: dict[str, Predicate]) -> Predicate:
    """One claim made of several: it holds when every part holds; the detail names each part's numbers."""
    return Predicate(
        words,
        all(p.holds for p in parts.values()),
        "; ".join(f"{name}: {p.detail}" for name, p in parts.items()),
    )


def at_least(value: float, threshold: float, what: str) -> Predicate:
    return Predicate(f"{what} ≥ {_fmt(threshold)}", value >= threshold, f"{_fmt(value)}")


def greater(a: float, b: float, what_a: str, what_b: str, factor: float = 1.0, margin: float = 0.0) -> Predicate:
    """``a > factor * b``, and with ``margin`` by more than that fraction of ``b`` ("a little more": strictly,
    with the margin stated)."""
    k = f"{factor:g} × " if factor != 1 else ""
    m = f" by > {margin:.0%}" if margin else ""
    ok = all(math.isfinite(v) for v in (a, b)) and a > factor * b * (1 + margin) and a > factor * b
    return Predicate(f"{what_a} > {k}{what_b}{m}", ok, f"{_fmt(a)} vs {_fmt(b)}")


def between(value: float, lo: float, hi: float, what: str) -> Predicate:
    """A range the paper states ("between a and b", "a-b %"): both ends checked."""
    ok = math.isfinite(value) and lo <= value <= hi
    return Predicate(f"{what} within [{_fmt(lo)}, {_fmt(hi)}]", ok, _fmt(value))


def all_but(values: dict[str, float], holds, except_: Sequence[str], what: str) -> Predicate:
    """ "Every X but E": the claim holds for every name outside ``except_`` and fails for each name in it,
    since the exception is part of the claim."""
    if len(values) < 2:
        raise TooFewPoints(f"{what!r}: over {len(values)} name(s)")
    missing = [e for e in except_ if e not in values]
    if missing:
        raise KeyError(f"{what!r}: the exceptions {missing} are not among {list(values)}")
    rule = [n for n in values if n not in except_ and not holds(values[n])]
    excepted = [n for n in except_ if holds(values[n])]
    detail = ", ".join(f"{n}: {_fmt(v)}" for n, v in values.items())
    if rule:
        detail += f"; fails for {', '.join(rule)}"
    if excepted:
        detail += f"; the exception {', '.join(excepted)} holds too"
    return Predicate(f"{what}, and not for {', '.join(except_)}", not rule and not excepted, detail)


def only(values: dict[str, float], holds, names: Sequence[str], what: str) -> Predicate:
    """ "Only X": the claim holds for every name in ``names`` and for no other."""
    p = all_but(values, holds, [n for n in values if n not in names], what)
    return Predicate(f"{what} for {', '.join(names)} only", p.holds, p.detail)


def ordering(values: dict[str, float], what: str = "") -> Predicate:
    """The named values are in strictly decreasing order, as listed."""
    names, vs = list(values), list(values.values())
    bad = _invalid(vs, f"{what + ': ' if what else ''}{' > '.join(names)}", xs=names)
    if bad:
        return bad
    ok = all(a > b for a, b in zip(vs, vs[1:]))
    return Predicate(
        f"{what + ': ' if what else ''}{' > '.join(names)}",
        ok,
        ", ".join(f"{n} {_fmt(v)}" for n, v in values.items()),
    )


def approaches(
    xs: Sequence,
    ys: Sequence[float],
    limit: float,
    tol: float,
    over: float = 0.01,
    eps: float = 0.005,
    what: str = "",
    strict: bool = False,
) -> Predicate:
    """A limit approached with x, as a limit and not as a value at every point: never above
    ``limit·(1+over)``, not falling with x (steps down ≤ ``eps``; with ``strict``, rising at every
    step), and the last point within ``tol`` below the limit."""
    bad = _invalid(ys, f"{what + ' ' if what else ''}approaches {_fmt(limit)} with x", xs=xs)
    if bad:
        return bad
    never_above = all(y <= limit * (1 + over) for y in ys)
    if strict:
        rising = all(b > a for a, b in zip(ys, ys[1:]))
    else:
        rising = all(b - a >= -eps * max(abs(a), 1e-12) for a, b in zip(ys, ys[1:]))
    reached = ys[-1] >= limit * (1 - tol)
    fails = [
        m
        for ok, m in (
            (never_above, "exceeds the limit"),
            (rising, "falls with x"),
            (reached, "last point short of the limit"),
        )
        if not ok
    ]
    words = (
        f"{what + ' ' if what else ''}approaches {_fmt(limit)} with x: never above it by > {over:.0%}, "
        f"{'rising at every step' if strict else f'no step down > {eps:.0%}'}, last point within {tol:.0%} below it"
    )
    detail = _series(xs, ys) + (f"; {', '.join(fails)}" if fails else "")
    return Predicate(words, not fails, detail)


def at_limit(
    xs: Sequence, ys: Sequence[float], limits: Sequence[float], tol: float, what: str = "", over: float = 0.01
) -> Predicate:
    """A limit the paper says is reached at every x (such as 'limited to one port', 'N x'): at every
    point at least ``limit·(1-tol)`` and, being a limit, at most ``limit·(1+over)``."""
    # A limit at one point is a value against a bound, not a trend: one point is enough.
    invalid = _invalid(ys, f"{what + ' ' if what else ''}at its limit at every x", at_least=1, xs=xs)
    if invalid:
        return invalid
    bad = [x for x, y, lim in zip(xs, ys, limits) if not (lim * (1 - tol) <= y <= lim * (1 + over))]
    detail = ", ".join(f"{x}: {_fmt(y)}/{_fmt(lim)}" for x, y, lim in zip(xs, ys, limits))
    if bad:
        detail += f"; off the limit at {', '.join(str(b) for b in bad)}"
    return Predicate(
        f"{what + ' ' if what else ''}at its limit at every x (from {tol:.0%} below to {over:.0%} above; "
        "fabricsim/limit shown)",
        not bad,
        detail,
    )


def proportional(xs: Sequence[float], ys: Sequence[float], tol: float, what: str = "") -> Predicate:
    """Grows in proportion to x: at every step, y's growth within ``tol`` of x's."""
    words = f"{what + ' ' if what else ''}grows in proportion to x at every step (within {tol:.0%} of x's growth)"
    bad = _invalid(ys, words, xs=xs)
    if bad:
        return bad
    if any(v <= 0 for v in [*xs, *ys]):
        return Predicate(words, False, "a value is zero or negative")
    growth = [(x1 / x0, y1 / y0) for x0, x1, y0, y1 in zip(xs, xs[1:], ys, ys[1:])]
    ok = all(abs(g / w - 1) <= tol for w, g in growth)
    return Predicate(words, ok, "; ".join(f"x {_fmt(w)}×, fabricsim {_fmt(g)}×" for w, g in growth))


def crossover(
    xs: Sequence[float], a: Sequence[float], b: Sequence[float], x1: float, x2: float, what: str = ""
) -> Predicate:
    """Series a starts below b and ends above it, crossing between x1 and x2."""
    _invalid([*a, *b], f"{what + ' ' if what else ''}crosses over", xs=xs)
    diff = [p - q for p, q in zip(a, b)]
    cross = next((xs[i] for i in range(1, len(xs)) if diff[i - 1] < 0 <= diff[i]), None)
    ok = cross is not None and x1 <= cross <= x2 and diff[-1] > 0
    return Predicate(
        f"{what + ' ' if what else ''}crosses over between {x1:g} and {x2:g}",
        ok,
        f"first x with a ≥ b: {cross}",
    )


def _ranks(vs: Sequence[float]) -> list[float]:
    """Ranks from 1, ties sharing their mean rank."""
    order = sorted(range(len(vs)), key=lambda i: vs[i])
    ranks = [0.0] * len(vs)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and vs[order[j + 1]] == vs[order[i]]:
            j += 1
        for k in range(i, j + 1):
            ranks[order[k]] = (i + j) / 2 + 1
        i = j + 1
    return ranks


def rises_overall(xs: Sequence[float], ys: Sequence[float], rho: float = 0.7, what: str = "") -> Predicate:
    """A rising trend that need not hold at every step: Spearman's rank correlation of y with x is at
    least ``rho``, and the last point is above the first."""
    words = f"{what + ' ' if what else ''}rises with x overall: rank correlation ≥ {rho:g}, last > first"
    bad = _invalid(ys, words, at_least=3, xs=xs)
    if bad:
        return bad
    rx, ry = _ranks(xs), _ranks(ys)
    mx, my = sum(rx) / len(rx), sum(ry) / len(ry)
    cov = sum((a - mx) * (b - my) for a, b in zip(rx, ry))
    var = math.sqrt(sum((a - mx) ** 2 for a in rx) * sum((b - my) ** 2 for b in ry))
    r = cov / var if var else 0.0
    return Predicate(words, r >= rho and ys[-1] > ys[0], f"{_series(xs, ys)}; rank correlation {r:.2f}")
