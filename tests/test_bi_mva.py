"""The closed-network MVA behind BI Table 1: analytic cases it must reproduce."""

import pytest

from fabricsim.experiments.bi.mva import Closed, solve


def test_one_customer_never_waits():
    s = solve(Closed(1, think=300.0, service=100.0))
    assert s.response == pytest.approx(100.0)
    assert s.throughput == pytest.approx(1 / 400.0)


def test_many_customers_saturate_the_queue():
    s = solve(Closed(224, think=1000.0, service=100.0))
    assert s.utilization == pytest.approx(1.0, abs=1e-6)
    # the queue holds everyone not thinking: response = n / X − think
    assert s.response == pytest.approx(224 * 100.0 - 1000.0, rel=1e-3)


def test_littles_law_holds_at_every_load():
    for n in (1, 5, 20, 224):
        c = Closed(n, think=500.0, service=40.0)
        s = solve(c)
        assert s.throughput * (c.think + s.response) == pytest.approx(n)
        assert s.queue == pytest.approx(s.throughput * s.response)


def test_bad_input():
    with pytest.raises(ValueError, match="population 0"):
        Closed(0, 1.0, 1.0)
    with pytest.raises(ValueError, match="service 0"):
        Closed(2, 1.0, 0.0)
