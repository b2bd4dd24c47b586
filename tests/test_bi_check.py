"""BI's runtime under the checker ([protocol] name = "bi_runtime"): the base model holds, the paper's mutants are
caught (enter-before-exit by the ghost invariant only), bad keys are named, and the report rows turn to
"disagrees" under their reproduction mutant."""

from __future__ import annotations

import re

import pandas as pd
import pytest

import fabricsim
from fabricsim.experiments import search
from fabricsim.experiments.bi import checking
from fabricsim.experiments.verdicts import DISAGREES


def _check(**kw) -> dict:
    """A check of bi_runtime: ``mutant`` and sizes in ``[check]``, the rest in ``[protocol.bi_runtime]``."""
    check = {k: kw.pop(k) for k in ("mutant", "caches") if k in kw}
    return fabricsim.check({"protocol": {"name": "bi_runtime", "bi_runtime": kw}, "check": check})


def test_the_base_model_keeps_every_invariant():
    r = _check(skew=1, period=2, horizon=1)
    assert r["ok"] and r["complete"] and r["states"] > 1000


@pytest.mark.parametrize(
    "mutant,skew",
    [("no-free-mark-check", 0), ("no-period-subtraction", 0)],
)
def test_each_fast_mutant_gives_a_generation_counterexample(mutant, skew):
    r = _check(mutant=mutant, skew=skew, period=2, horizon=2)
    assert not r["ok"] and r["violation"]["kind"] == "generation"


def test_enter_before_exit_breaks_the_ghost_snapshot_claim_and_not_safety():
    # horizon 1 is enough: the reader finishes a section between bi_reclaim's two loads
    r = _check(mutant="enter-before-exit", horizon=1)
    assert not r["ok"] and r["violation"]["kind"] == checking.GHOST
    r = _check(mutant="enter-before-exit", horizon=1, ghost=False)
    assert r["ok"] and r["complete"]
    # exit first keeps the claim
    r = _check(horizon=1)
    assert r["ok"] and r["complete"]


def test_the_writer_ticks_and_engine_thread_keys_are_taken():
    # a writer delayed inside bi_reclaim: the prefetch mutant is still caught
    r = _check(writer_ticks=True, mutant="no-free-mark-check", period=2, horizon=2)
    assert not r["ok"] and r["violation"]["kind"] == "generation"
    # a separate quiescence thread: fine at horizon 0 (it fails at 3: docs/design/bi.md §7)
    r = _check(engine_thread=True, horizon=0)
    assert r["ok"] and r["complete"] and r["states"] > 1000
    # the engine writing back after its flushes: a different interleaving space
    f = _check(engine_thread=True, flush_before_writeback=True, horizon=0)
    assert f["ok"] and f["complete"] and f["states"] != r["states"]


@pytest.mark.parametrize(
    "key,value,want",
    [
        ("period", 1, "period: 1: expected 2 to 6"),
        ("slots", 9, "slots: 9: expected 2 to 4"),
        ("skew", 7, "skew: 7: expected 0 to 3"),
        ("allocs", 0, "allocs: 0: expected 1 to 8"),
        ("horizon", 99, "horizon: 99: expected 0 to 8"),
        ("mutant", "nope", "expected one of enter-before-exit"),
        ("ghost", "yes", "ghost"),
        ("caches", 2, re.escape('check.caches: does not apply to [protocol] name = "bi_runtime"')),
    ],
)
def test_bad_bi_runtime_keys_are_named(key, value, want):
    with pytest.raises(fabricsim.ConfigError, match=want):
        _check(**{key: value})


def test_bi_runtime_keys_are_refused_elsewhere_and_skew_ignored_needs_a_skew():
    with pytest.raises(fabricsim.ConfigError, match=re.escape("protocol.msi.period: unknown key")):
        fabricsim.check({"protocol": {"name": "msi", "msi": {"period": 2}}})
    with pytest.raises(fabricsim.ConfigError, match=re.escape("check.period: moved to [protocol.bi_runtime]")):
        fabricsim.check({"protocol": {"name": "msi"}, "check": {"period": 2}})
    with pytest.raises(fabricsim.ConfigError, match="skew-ignored needs clocks that differ"):
        _check(mutant="skew-ignored", skew=0)


def test_the_rows_are_computed_and_the_reproduction_mutant_flips_the_base_row():
    rows_data = checking.analyze(pd.DataFrame([{**search.check(p), **p.labels} for p in checking.sweep(True).points]))
    rows = {r.metric: r.verdict for r in checking.compare(rows_data)}
    assert rows["BI keeps every invariant (skews and periods)"] != DISAGREES
    assert rows["no-period-subtraction is caught"] != DISAGREES
    # a base search that found a violation (the mutant's data) turns the row to disagrees
    broken = rows_data.copy()
    broken.loc[broken["mutant"] == "", ["ok", "violation"]] = [False, "generation"]
    assert {r.metric: r.verdict for r in checking.compare(broken)}[
        "BI keeps every invariant (skews and periods)"
    ] == DISAGREES


def _redundant_data(safety_ok: bool, ghost_kind: str) -> pd.DataFrame:
    """The two enter-before-exit searches of one variant: safety alone, then with the ghost invariant."""
    base = {"mutant": "enter-before-exit", "variant": checking.WT, "complete": True, "seconds": 1.0}
    return pd.DataFrame(
        [
            {
                **base,
                "case": "safety",
                "ghost": False,
                "ok": safety_ok,
                "violation": "" if safety_ok else "generation",
                "states": 10,
            },
            {**base, "case": "ghost", "ghost": True, "ok": not ghost_kind, "violation": ghost_kind, "states": 5},
        ]
    )


@pytest.mark.parametrize(
    "safety_ok,ghost_kind,agrees",
    [
        (True, checking.GHOST, True),
        # the mutant breaks safety after all: the proof is wrong
        (False, checking.GHOST, False),
        # the ghost invariant does not see the mixed snapshot: it checks nothing
        (True, "", False),
        # another violation first is not the local claim broken
        (True, "order", False),
    ],
)
def test_the_shown_redundant_row_fails_either_way(safety_ok, ghost_kind, agrees):
    rows = [r for r in checking.compare(_redundant_data(safety_ok, ghost_kind)) if "redundant" in r.metric]
    assert [r.metric for r in rows] == [f"enter-before-exit is shown redundant ({checking.WT})"]
    assert (rows[0].verdict != DISAGREES) == agrees
    assert "shown redundant" in rows[0].explanation.lower() and "§7" in rows[0].explanation
