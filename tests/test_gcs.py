"""GCS (seed 004): the experiments' MIND system, analytic latencies of the
protocol's paths, completion of contended timed runs (a livelock would not
complete), and configuration errors by name."""

from __future__ import annotations

from pathlib import Path

import pytest

import fabricsim
from fabricsim.experiments.gcs import system

ROOT = Path(__file__).resolve().parent.parent


def test_the_experiments_system_is_the_example():
    try:
        import tomllib
    except ModuleNotFoundError:  # Python < 3.11
        import tomli as tomllib
    example = tomllib.loads((ROOT / "examples" / "gcs_mind.toml").read_text())
    assert example == system.mind(blades=2, threads=2, requests=200)


def _run(**kw):
    r = fabricsim.run(system.mind(**kw), progress=False)
    return r.summary, system.lock_metrics(r)


def test_a_cached_read_lock_costs_the_thread_call_and_the_controller():
    # thread 0.1 µs + blade controller 1 µs; nothing crosses the network after the first acquisition
    s, m = _run(blades=2, threads=1, read_fraction=1.0, requests=50)
    assert s["outcome"] == "completed"
    assert m["lat_mean_us"] == pytest.approx(1.1, abs=0.01)


def test_a_miss_without_locality_crosses_to_the_memory_blade_and_back():
    # thread 0.1 + controller 1 + 2 µs + switch 0.3 + 2 µs + memory 1 + 2 µs + switch 0.3 + 2 µs + controller 1
    # = 11.7 µs, plus the 1 KiB region's serialization on the links it crosses (≈ 0.1 µs); the NIC's
    # occupancy delays only a message that finds it busy
    s, m = _run(blades=1, threads=1, read_fraction=1.0, requests=20, variant="no-locality")
    assert m["lat_mean_us"] == pytest.approx(11.8, abs=0.15), m


def test_contended_locks_complete_in_every_scheme_and_mix():
    # every thread gets every lock it asks for: no livelock, no starvation to the end
    for variant in ("gcs", "no-data", "no-locality", "pthread"):
        for blades, threads in ((3, 1), (4, 2)):
            for rf in (0.0, 0.5):
                c = system.mind(blades=blades, threads=threads, read_fraction=rf, requests=30, variant=variant)
                c["sim"]["max_time"] = "100ms"
                s = fabricsim.run(c, progress=False).summary
                assert s["outcome"] == "completed", (variant, blades, threads, rf, s["requests"])


def test_writers_hand_off_once_per_acquisition_with_combined_data_and_twice_without():
    s, gcs = _run(blades=4, threads=1, read_fraction=0.0, requests=50)
    s2, nodata = _run(blades=4, threads=1, read_fraction=0.0, requests=50, variant="no-data")
    assert s["protocol"]["transfers"] >= 4 * 50  # every acquisition from another blade is a hand-off
    assert nodata["lat_mean_us"] > 1.7 * gcs["lat_mean_us"]  # the page's transaction after the lock's


@pytest.mark.parametrize(
    "key,value,want",
    [
        ("protocol.gcs.variant", '"fast"', 'expected "gcs", "no-data", "no-locality", "pthread"'),
        ("protocol.gcs.region", '"2MiB"', "expected at most 1 MiB"),
        ("protocol.gcs.colour", '"red"', "colour"),
    ],
)
def test_bad_gcs_settings_are_named(key, value, want):
    with pytest.raises(fabricsim.ConfigError) as e:
        fabricsim.run(ROOT / "examples" / "gcs_mind.toml", set=[f"{key}={value}"], progress=False)
    assert key.split(".")[-1] in str(e.value) and want in str(e.value)


def test_threads_that_do_not_divide_over_the_blades_are_refused():
    c = system.mind(blades=2, threads=2)
    c["requester"].append({"name": "extra"})
    c["link"].append({"a": "extra", "b": "b0", "latency": "0ns", "bandwidth": "1TB/s", "port_delay": "0ns"})
    with pytest.raises(fabricsim.ConfigError, match="the same number on each of the 2"):
        fabricsim.run(c, progress=False)


def test_the_checker_catches_each_broken_gcs():
    for mutant, kind in (("grant-without-data", "stale region"), ("early-inv-ack", "swmr")):
        r = fabricsim.check({"protocol": {"name": "gcs"}, "check": {"caches": 3, "mutant": mutant}})
        assert not r["ok"] and r["violation"]["kind"] == kind
    r = fabricsim.check({"protocol": {"name": "gcs", "gcs": {"variant": "no-data"}}, "check": {"caches": 2}})
    assert r["ok"] and r["complete"]
    with pytest.raises(fabricsim.ConfigError, match="protocol.msi.blade_threads: unknown key"):
        fabricsim.check({"protocol": {"name": "msi", "msi": {"blade_threads": 2}}})


def test_a_line_with_an_intercept_is_linear_at_every_step_and_a_kink_is_not():
    from fabricsim.experiments.gcs import micro
    from fabricsim.experiments.verdicts import TooFewPoints

    assert micro.linear_steps([2, 4, 8], [10, 20, 40], 0.15, "latency").holds  # 5 a blade at every step
    assert micro.linear_steps([0, 1, 10, 100], [3, 4, 13, 103], 0.15, "loop").holds  # an intercept
    assert not micro.linear_steps([2, 4, 8], [8.7, 51.6, 99.5], 0.15, "latency").holds  # 21.5 then 12 a blade
    assert not micro.linear_steps([2, 4, 8], [30, 20, 10], 0.15, "falling").holds
    with pytest.raises(TooFewPoints):
        micro.linear_steps([2, 8], [1, 2], 0.15, "two points")


def test_a_number_stated_for_every_configuration_is_compared_where_it_is_farthest():
    from fabricsim.experiments.gcs import micro

    assert micro.farthest({2: 1.79, 4: 0.75, 8: 0.80}, 0.3) == (2, 1.79)
    assert micro.farthest({2: 0.31, 4: 0.998, 8: 0.999}, 1.0) == (2, 0.31)
    assert micro.farthest({1: 2.0, 2: 0.45}, 1.0) == (2, 0.45)  # by ratio: 1 / 0.45 > 2
