"""BI (seed 001): the experiments' Superdome Flex system, the unloaded
latency of each level against the calibrated parameters, the explicit cache
operations' costs and semantics in timed runs, and configuration errors by
name."""

from __future__ import annotations

from pathlib import Path

import pytest

import fabricsim
from fabricsim.experiments.bi import system

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "bi_superdome.toml"
WORKLOAD = {
    "pattern": "uniform",
    "read_fraction": 0.9,
    "footprint": "1MiB",
    "line": "64B",
    "requests": 2000,
    "warmup": 500,
}


def test_the_experiments_system_is_the_example():
    try:
        import tomllib
    except ModuleNotFoundError:  # Python < 3.11
        import tomli as tomllib
    example = tomllib.loads(EXAMPLE.read_text())
    assert example == system.superdome(sockets=2, cores=2, workload=WORKLOAD, max_time="1ms")


def test_the_example_runs_workload_driven_cores_across_domains():
    s = fabricsim.run(EXAMPLE, progress=False).summary
    assert s["outcome"] == "completed", s
    assert s["requests"]["completed"] == 4 * 2500


def _bench(bench: dict, sockets: int = 8, **bi) -> dict:
    r = fabricsim.run(system.superdome(sockets=sockets, bench=bench, bi=bi or None), progress=False)
    m = system.bench_metrics(r)
    assert m["outcome"] == "completed" and m["done"] == 1, m
    return m


@pytest.mark.parametrize(
    "what,bench,want_ns",
    [
        ("L1", {"working_set": "16KiB"}, 1.6),
        ("L2", {"working_set": "512KiB"}, 5.6),
        ("L3", {"working_set": "8MiB"}, 22.0),
        ("local memory", {"working_set": "64MiB", "warm": False, "home": 0}, 90.0),
        ("another socket's memory", {"working_set": "64MiB", "warm": False, "home": 1}, 140.0),
        ("the other enclosure's memory", {"working_set": "64MiB", "warm": False, "home": 4}, 400.0),
    ],
)
def test_unloaded_latency_of_each_level_is_the_calibrated_one(what, bench, want_ns):
    # docs/design/bi.md §4: L1 4 cycles, L2 14 cycles at 2.5 GHz, L3 22 ns, DRAM 90 / 140 / 400 ns
    m = _bench({"kind": "read", "sequential": True, "ops": 500, **bench})
    assert m["ns_per_op"] == pytest.approx(want_ns, rel=0.03), (what, m)


def _flush(op: str, state: str, lines: int = 256, reps: int = 2, **bi) -> dict:
    return _bench({"kind": "flush", "op": op, "state": state, "lines": lines, "reps": reps, "reread": True}, 2, **bi)


def test_the_machines_core_is_the_skylake_sp_preset():
    # one machine, one parameter set: BI's core values are the preset's (docs/cpu-presets.md), in the
    # simulator (its [protocol.bi] defaults) and in the experiments (system.py), not restated copies
    core = fabricsim.core_presets()["skylake-sp"]
    assert (system.FILL_BUFFERS, system.STORE_BUFFER, system.ROB) == (
        core["fill_buffers"],
        core["store_buffer"],
        core["rob"],
    )
    assert system.GHZ == pytest.approx(1000 / core["cycle_ps"]) == pytest.approx(2.5)  # BI §7
    for level, ws in (("l1", "16KiB"), ("l2", "512KiB")):
        m = _bench({"kind": "read", "sequential": True, "ops": 500, "working_set": ws})
        assert m["ns_per_op"] == pytest.approx(core[level]["latency_cycles"] * core["cycle_ps"] / 1000, rel=0.001)
    # a clflushopt holds one of the fill buffers: the default runs as the preset's count does, not as one less
    default = _flush("clflushopt", "r")["ns_per_op"]
    assert _flush("clflushopt", "r", fill_buffers=core["fill_buffers"])["ns_per_op"] == default
    assert _flush("clflushopt", "r", fill_buffers=core["fill_buffers"] - 1)["ns_per_op"] != default


def test_a_flush_stays_in_its_socket_on_the_coherent_machine_and_leaves_it_when_broadcast():
    def per_line(sockets, **bi):
        bench = {"kind": "flush", "op": "clflushopt", "state": "m", "lines": 256, "reps": 2, "reread": True}
        return _bench(bench, sockets, **bi)["ns_per_op"]

    # the home snoops only the holders: the issuing socket, whatever the machine's size
    coherent = [per_line(s, coherent=True) for s in (1, 2)]
    assert coherent[1] == pytest.approx(coherent[0], rel=0.01)
    # snooping every socket, each flush waits for a remote round trip: the cost grows with sockets
    broadcast = [per_line(s, coherent=True, mutant="flush-broadcast-machine-wide") for s in (1, 2)]
    assert broadcast[0] == pytest.approx(coherent[0], rel=0.01)
    assert broadcast[1] > 2 * broadcast[0]


def test_clflush_serialises_and_clflushopt_pipelines_up_to_its_slots():
    serial = _flush("clflush", "r")["ns_per_op"]
    opt = _flush("clflushopt", "r")["ns_per_op"]
    one = _flush("clflushopt", "r", fill_buffers=1)["ns_per_op"]
    # clflush: the core's issue (1 ns) and the LLC's round trip (22 - 5.6 ns) a line
    assert serial == pytest.approx(17.4, rel=0.05)
    assert opt < serial / 5
    assert one == pytest.approx(serial, rel=0.1), "one slot: each clflushopt waits for the last"


def test_mfence_waits_for_the_flushes_in_flight():
    # one line: the flush's round trip, then the fence's 13.2 ns
    m = _flush("clflushopt", "r", lines=1, reps=4)
    assert m["ns_per_op"] == pytest.approx(1 + 16.4 + 13.2, rel=0.05)


def test_a_flush_costs_more_for_a_modified_line_and_most_for_one_the_socket_does_not_hold():
    r, m, i = (_flush("clflush", s)["ns_per_op"] for s in ("r", "m", "i"))
    assert r < m < i
    assert m - r == pytest.approx(30, rel=0.1)  # the memory's write-back ack
    assert i - r == pytest.approx(40, rel=0.1)  # the broadcast
    no_bcast = _flush("clflush", "i", broadcast_on_miss=False)["ns_per_op"]
    assert no_bcast == pytest.approx(r, rel=0.05)


def test_clwb_keeps_the_line_and_clflushopt_drops_it():
    wb = _flush("clwb", "m")
    opt = _flush("clflushopt", "m")
    assert wb["reread_ns"] < 6, "loads after clwb hit the core's caches"
    assert opt["reread_ns"] >= 85, "loads after clflushopt go to memory"
    assert _flush("clwb", "m", clwb_invalidates=True)["reread_ns"] >= 85


def test_a_bench_with_caches_without_capacity_hits_l1_everywhere():
    m = _bench({"kind": "read", "working_set": "8MiB", "ops": 500}, 2, mutant="no-capacity")
    assert m["ns_per_op"] == pytest.approx(1.6, rel=0.01)


@pytest.mark.parametrize(
    "key,value,want",
    [
        ("protocol.bi.domains", "3", "expected a multiple of 3"),
        ("protocol.bi.fill_buffers", "0", "expected 1 to 1024"),
        ("protocol.bi.l2_ways", "7", "ways"),
        ("protocol.bi.mutant", '"fast"', "expected one of flush-keeps-line"),
        ("protocol.bi.colour", '"red"', "colour"),
        ("protocol.bi.l3_latency", '"1ns"', "l1_latency <= l2_latency <= l3_latency"),
        ("protocol.bi.bench.kind", '"write"', 'expected "read" or "flush"'),
        ("protocol.bi.coherent", '"yes"', "protocol.bi.coherent"),
        ("protocol.bi.mutant", '"home-forgets-sharer"', "coherent = true only"),
        ("protocol.bi.mutant", '"flush-broadcast-machine-wide"', "coherent = true only"),
        ("protocol.bi.tree.nodes", "0", "expected 1 to 2^22 nodes"),
        ("protocol.bi.tree.updates", "1.5", "expected a share from 0 to 1"),
        ("protocol.bi.tree.front_end", '"urcu"', "expected protocol.bi.coherent = true"),
        ("protocol.bi.tree.front_end", '"rcu"', 'expected "bi" or "urcu"'),
        ("protocol.bi.tree.warmup", '"3ms"', "expected less than time"),
        ("protocol.bi.tree.log_cap", "4", "expected 16 to 2^20 records"),
        ("protocol.bi.tree.store_buffer", "2000", "expected 0 to 1024 entries"),
        ("protocol.bi.tree.nodez", "4", "nodez"),
    ],
)
def test_bad_bi_settings_are_named(key, value, want):
    with pytest.raises(fabricsim.ConfigError) as e:
        fabricsim.run(EXAMPLE, set=[f"{key}={value}"], progress=False)
    assert want in str(e.value), str(e.value)


def test_a_benchmark_key_of_the_other_kind_is_refused():
    c = system.superdome(sockets=2, bench={"kind": "read", "lines": 4})
    with pytest.raises(fabricsim.ConfigError) as e:
        fabricsim.run(c, progress=False)
    assert "protocol.bi.bench.lines" in str(e.value) and 'kind = "read"' in str(e.value)


def test_the_checker_explores_a_domain_of_two_cores(cli):
    import json

    proc = cli("check", str(ROOT / "examples" / "check" / "bi.toml"), "--json")
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    assert report["ok"] and report["complete"] and report["states"] > 100_000


def test_the_checker_finds_a_home_that_forgets_a_sharer_domain():
    size = {"caches": 1, "addresses": 1, "values": 1, "mutant": "home-forgets-sharer"}

    def check(name: str, **own) -> dict:
        return fabricsim.check({"protocol": {"name": name, name: own}, "check": size})

    r = check("bi", coherent=True, domains=2)
    assert not r["ok"] and r["violation"]["kind"] == "stale", r["violation"]
    with pytest.raises(fabricsim.ConfigError, match="protocol.msi.coherent: unknown key"):
        check("msi", coherent=True)
    with pytest.raises(fabricsim.ConfigError, match="with coherent = true"):
        check("bi", coherent=False, domains=2)
