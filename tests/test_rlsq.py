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
