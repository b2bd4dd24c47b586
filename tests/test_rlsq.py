"""RLSQ's experiments: the Table 2 system they build is the example's."""

from pathlib import Path

from fabricsim.experiments.rlsq.system import table2

ROOT = Path(__file__).resolve().parent.parent


def test_the_experiments_system_is_the_table2_example():
    try:
        import tomllib
    except ModuleNotFoundError:  # Python < 3.11
        import tomli as tomllib
    example = tomllib.loads((ROOT / "examples" / "rlsq_table2.toml").read_text())
    assert example == table2()


def test_the_nic_waits_a_round_trip_per_ordered_line_and_rc_opt_does_not():
    import fabricsim

    t = {}
    for v in ("nic", "rc-opt"):
        b = table2(v)
        b["workload"]["requests"] = 200
        t[v] = fabricsim.run(b).summary["sim_time_ps"]
    assert t["nic"] > 50 * t["rc-opt"], t


def test_the_experiments_line_reads_per_get_are_the_workloads():
    # one GET per batch and 1 ms between batches: a wrong count of reads per GET starts one GET more
    # or fewer than asked, a millisecond apart
    import fabricsim
    from fabricsim.experiments.rlsq.system import kvs

    for get in ("validation", "single_read", "farm", "pessimistic"):
        for size in (48, 64, 120, 1000):
            b = kvs("unordered", get, size, batch=1, gets=5)
            b["workload"]["kvs_gets"]["batch_gap"] = "1ms"
            t = fabricsim.run(b).summary["sim_time_ps"] / 1e9
            assert 4.0 < t < 4.01, (get, size, t)


def test_single_read_needs_one_round_trip_per_get_and_validation_two():
    import fabricsim
    from fabricsim.experiments.rlsq.system import kvs

    t = {}
    for get in ("validation", "single_read"):
        b = kvs("rc-opt", get, 64, batch=1000, gets=200)
        b["workload"]["kvs_gets"]["serial_reads"] = True
        t[get] = fabricsim.run(b).summary["sim_time_ps"]
    assert 1.8 < t["validation"] / t["single_read"] < 2.1, t


def test_the_mmio_system_is_the_table3_example():
    try:
        import tomllib
    except ModuleNotFoundError:  # Python < 3.11
        import tomli as tomllib
    from fabricsim.experiments.rlsq.system import table3

    example = tomllib.loads((ROOT / "examples" / "rlsq_mmio.toml").read_text())
    assert example == table3()


def test_the_p2p_switch_refuses_a_workload_with_writes_by_name():
    import pytest

    import fabricsim
    from fabricsim.experiments.rlsq.system import p2p

    b = p2p("voq", 64)
    b["workload"] = {"pattern": "stream", "footprint": "256KiB", "line": "64B", "requests": 100}
    b["requester"][1]["workload"] = {}
    with pytest.raises(fabricsim.ConfigError, match="the P2P switch carries reads only"):
        fabricsim.run(b)


def test_fig2s_two_ordered_dma_reads_take_two_round_trips_and_two_unordered_one():
    # RLSQ Fig 2's patterns on an idle Table 2 system: the NIC's stop and wait doubles the latency of a
    # two-line DMA; unordered, the second line costs only its issue and its completion's transfer
    import fabricsim
    from fabricsim.experiments.rlsq import fig02

    t = {p: fabricsim.run(fig02.dma(p)).summary["sim_time_ps"] for p in fig02.PATTERNS}
    assert 1.9 < t["two-ordered"] / t["one"] < 2.1, t
    assert 1.0 < t["two-unordered"] / t["one"] < 1.05, t
