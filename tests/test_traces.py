"""The trace stand-ins of ESF's five applications: deterministic, with the stated mix and locality, and
readable by fabricsim's trace replay."""

from __future__ import annotations

import numpy as np
import pytest

import fabricsim
from fabricsim import traces


def test_same_seed_same_bytes_other_seed_other_bytes(tmp_path):
    a = traces.write_trace("redis", ["req0", "req1"], 2000, tmp_path / "a.trace", seed=3)
    b = traces.write_trace("redis", ["req0", "req1"], 2000, tmp_path / "b.trace", seed=3)
    c = traces.write_trace("redis", ["req0", "req1"], 2000, tmp_path / "c.trace", seed=4)
    assert a.read_bytes() == b.read_bytes()
    assert a.read_bytes() != c.read_bytes()


@pytest.mark.parametrize("app", list(traces.APPS))
def test_each_stand_in_has_its_stated_mix_and_locality(app):
    a = traces.APPS[app]
    is_write, addr = traces.records(a, 50_000, seed=1)
    reads = 1 - is_write.mean()
    expected = float(np.mean(a.phases)) if a.phases else a.read_fraction
    assert abs(reads - expected) < 0.01, (app, reads, expected)
    assert 0 <= addr.min() and addr.max() < a.footprint and (addr % traces.LINE == 0).all()
    # A sequential access is the next line: the share of +64 B steps is about the stated probability.
    steps = np.diff(addr) == traces.LINE
    assert abs(steps.mean() - a.sequential) < 0.02, (app, steps.mean())


def test_silo_phases_change_the_mix_every_phase_length():
    a = traces.APPS["silo"]
    is_write, _ = traces.records(a, len(a.phases) * a.phase_length, seed=1)
    per_phase = 1 - is_write.reshape(len(a.phases), a.phase_length).mean(axis=1)
    assert np.allclose(per_phase, a.phases, atol=0.05)
    assert np.corrcoef(per_phase, a.phases)[0, 1] > 0.95


def test_a_stand_in_replays_in_fabricsim(tmp_path):
    path = traces.write_trace("XSBench", ["req0"], 500, tmp_path / "x.trace")
    cfg = {
        "requester": [{"name": "req0"}],
        "memory": [{"name": "mem0"}],
        "link": [{"a": "req0", "b": "mem0", "bandwidth": "64GB/s"}],
        "workload": {"pattern": "trace", "trace": str(path), "requests": 500, "window": 16},
    }
    r = fabricsim.run(cfg)
    assert r.summary["outcome"] == "completed"
    assert r.summary["requests"]["completed"] == 500
    writes = int(traces.records(traces.APPS["XSBench"], 500, seed=1000)[0].sum())
    assert r.classes.set_index("class").loc["write_req", "packets"] == writes
