"""CORD's experiments: the Table 1 system the experiments build is the example's."""

from pathlib import Path

from fabricsim.experiments.cord.system import table1

ROOT = Path(__file__).resolve().parent.parent


def test_the_experiments_system_is_the_table1_example():
    try:
        import tomllib
    except ModuleNotFoundError:  # Python < 3.11
        import tomli as tomllib
    example = tomllib.loads((ROOT / "examples" / "cord_table1.toml").read_text())
    assert example == table1()


def test_wb_is_the_same_system_under_mesi_with_receivers_and_runs():
    import fabricsim
    from fabricsim.experiments.cord import apps, system

    wb = table1("UPI", "wb")
    assert wb["protocol"]["name"] == "mesi" and "cord" not in wb["protocol"]
    assert wb["link"] == table1("UPI")["link"] and wb["protocol"]["cache"] == system.WB_CACHE
    # one interleave block per LLC slice: host h's memory is its own slices
    assert wb["protocol"]["interleave"] == f"{system.WB_FOOTPRINT_MIB * 1024 // len(wb['memory'])}KiB"
    fabricsim.validate(wb)
    # a short Fig 7 point per variant: WB pays ownership misses across hosts and is the slowest
    times = {}
    for v in apps.ALL_VARIANTS:
        b = table1("UPI", v)
        b["workload"].update(consume=True, release_every="256B", requests=20)
        times[v] = fabricsim.run(b).summary["sim_time_ps"]
    assert times["wb"] > max(times[v] for v in apps.VARIANTS), times
