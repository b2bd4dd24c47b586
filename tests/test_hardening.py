"""Issue 10: hostile input gets a clear error and a documented exit code; never a traceback,
a panic, an abort or a hang."""

from __future__ import annotations

import copy
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

import fabricsim
from conftest import REPO, TINY_DICT, TINY_TOML, sigint_default
from fabricsim import cli as cli_module
from fabricsim import sweeps

LITMUS = REPO / "python" / "fabricsim" / "litmus"
TESTS = Path(__file__).resolve().parent


def run_cli(*args: str, env: dict | None = None, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "fabricsim", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, **(env or {})},
        cwd=str(TESTS.parent),
    )


def no_traceback(proc: subprocess.CompletedProcess) -> None:
    assert "Traceback" not in proc.stderr, proc.stderr
    assert "panicked" not in proc.stderr, proc.stderr


# -- exit codes -----------------------------------------------------------------------------
def test_exit_code_constants_are_distinct_and_documented():
    codes = [
        cli_module.EXIT_OK,
        cli_module.EXIT_ERROR,
        cli_module.EXIT_USAGE,
        cli_module.EXIT_DEADLOCK,
        cli_module.EXIT_TIME_LIMIT,
        cli_module.EXIT_VIOLATION,
        cli_module.EXIT_INCOMPLETE,
        cli_module.EXIT_INTERRUPTED,
    ]
    assert codes == [0, 1, 2, 3, 4, 5, 6, 130]
    readme = (REPO / "README.md").read_text()
    for code in codes:
        assert f"| {code} |" in readme


def test_run_exits_4_on_time_limit(tmp_path: Path):
    cfg = tmp_path / "t.toml"
    cfg.write_text(TINY_TOML.replace("seed = 1", 'seed = 1\nmax_time = "50ns"'))
    proc = run_cli("run", str(cfg))
    no_traceback(proc)
    assert proc.returncode == 4, proc.stderr
    assert "time limit" in proc.stderr


def test_run_exits_3_on_deadlock(tmp_path: Path):
    cfg = tmp_path / "d.toml"
    cfg.write_text(
        '[topology]\nkind = "ring"\nswitches = 8\nrequesters = 8\nmemories = 8\n'
        '[fabric]\nbuffer = "128B"\ndeadlock_avoidance = "none"\n'
        '[defaults.link]\nbandwidth = "32GB/s"\nlatency = "1ns"\nport_delay = "2ns"\n'
        '[defaults.memory]\nbandwidth = "inf"\n'
        '[workload]\npattern = "uniform"\nread_fraction = 0.0\nwindow = 64\nrequests = 3000\ninterleave = "64B"\n'
    )
    proc = run_cli("run", str(cfg), "--quiet")
    no_traceback(proc)
    assert proc.returncode == 3, proc.stderr
    assert "deadlock" in proc.stderr


def test_check_violation_exits_5_and_litmus_failure_exits_5():
    proc = run_cli("check", str(REPO / "examples" / "check" / "mesi_mutant.toml"))
    assert proc.returncode == 5, proc.stderr
    proc = run_cli(
        "litmus", str(LITMUS / "MP+rel+acq.litmus"), "--model", "rc", "--protocol", "msi", "--mutant", "reorder-release"
    )
    assert proc.returncode == 5, proc.stderr


# -- item 1: litmus limits on a protocol ----------------------------------------------------
def wide_litmus(regs: int) -> str:
    body = "".join(f"  int r{i} = atomic_load_explicit(x, memory_order_relaxed);\n" for i in range(regs))
    return (
        "C WIDE\n{ [x]=0; [y]=0; }\n"
        f"P0(atomic_int* x, atomic_int* y) {{\n{body}}}\n"
        "P1(atomic_int* x, atomic_int* y) {\n  atomic_store_explicit(x, 1, memory_order_relaxed);\n}\n"
        "exists (0:r0=1)\n"
    )


def test_litmus_with_too_many_registers_on_a_protocol_is_an_error(tmp_path: Path):
    f = tmp_path / "wide.litmus"
    f.write_text(wide_litmus(5))
    proc = run_cli("litmus", str(f), "--model", "sc", "--protocol", "mesi")
    no_traceback(proc)
    assert proc.returncode == 2, proc.stderr
    assert str(f) in proc.stderr and "5 registers" in proc.stderr and "MAX_REGS" in proc.stderr


# -- item 3: the oracle's exploration is bounded ----------------------------------------------
def big_litmus(threads: int, ops: int) -> str:
    locs = ["x", "y", "z", "w"]
    params = ", ".join(f"atomic_int* {v}" for v in locs)
    out = "C BIG\n{ " + " ".join(f"[{v}]=0;" for v in locs) + " }\n"
    for t in range(threads):
        body = ""
        for i in range(ops):
            loc = locs[(t + i) % len(locs)]
            if i % 2 == 0:
                body += f"  atomic_store_explicit({loc}, {t * ops + i + 1}, memory_order_relaxed);\n"
            else:
                body += f"  int r{i // 2} = atomic_load_explicit({loc}, memory_order_relaxed);\n"
        out += f"P{t}({params}) {{\n{body}}}\n"
    return out + "exists (0:r0=1)\n"


def test_a_litmus_test_too_large_for_the_oracle_is_refused_quickly(tmp_path: Path):
    f = tmp_path / "big.litmus"
    f.write_text(big_litmus(4, 8))
    # refused by its size, not by exhausting the search: run_cli's timeout
    # fails a run that explores (a wall-time bound flaked on a loaded machine)
    proc = run_cli("litmus", str(f), "--model", "sc", timeout=60)
    no_traceback(proc)
    assert proc.returncode == 1, proc.stderr
    assert "too large" in proc.stderr and "BIG" in proc.stderr and str(f) in proc.stderr


# -- item 4: Ctrl-C in check and litmus -------------------------------------------------------
def _interrupt(args: list[str], tmp_path: Path) -> tuple[subprocess.Popen, str, str, float]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "fabricsim", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=sigint_default,
    )
    time.sleep(2.0)
    start = time.monotonic()
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=30)
    return proc, out, err, time.monotonic() - start


def test_ctrl_c_stops_check_with_what_was_explored(tmp_path: Path):
    cfg = tmp_path / "big.toml"
    cfg.write_text('[protocol]\nname = "german"\n[check]\ncaches = 8\nvalues = 2\n')
    proc, out, err, took = _interrupt(["check", str(cfg)], tmp_path)
    assert proc.returncode == 130, err
    assert "incomplete" in err and "states" in err, err
    assert took < 2
    assert "Traceback" not in err


def test_ctrl_c_stops_litmus_with_what_was_explored(tmp_path: Path):
    f = tmp_path / "big.litmus"
    f.write_text(big_litmus(4, 8))
    proc, out, err, took = _interrupt(["litmus", str(f), "--model", "tso"], tmp_path)
    assert proc.returncode == 130, err
    assert "incomplete" in err and "states" in err, err
    assert took < 2
    assert "Traceback" not in err


# -- item 5: tracebacks ------------------------------------------------------------------------
def test_binary_litmus_file_is_an_error(tmp_path: Path):
    f = tmp_path / "bin.litmus"
    f.write_bytes(b"C X\n\xff\xfe\x00\x81garbage")
    proc = run_cli("litmus", str(f), "--model", "sc")
    no_traceback(proc)
    assert proc.returncode == 2 and str(f) in proc.stderr and "UTF-8" in proc.stderr


@pytest.mark.parametrize("kind", ["garbage", "truncated", "directory", "empty", "foreign"])
def test_results_on_a_file_that_is_not_a_store_is_an_error_and_changes_nothing(tmp_path: Path, kind: str):
    db = tmp_path / "x.db"
    if kind == "garbage":
        db.write_bytes(b"this is not sqlite\n" * 100)
    elif kind == "truncated":
        good = tmp_path / "good.db"
        fabricsim.sweep(TINY_DICT, grid={"workload.window": [1, 2]}, db=good, workers=1, progress=False)
        db.write_bytes(good.read_bytes()[:1500])
    elif kind == "directory":
        db.mkdir()
    elif kind == "empty":
        db.write_bytes(b"")
    else:
        con = sqlite3.connect(db)
        con.execute("CREATE TABLE people (name TEXT)")
        con.commit()
        con.close()
    before = db.read_bytes() if db.is_file() else None
    proc = run_cli("results", str(db))
    no_traceback(proc)
    assert proc.returncode == 2, proc.stderr
    assert str(db) in proc.stderr and "sweep store" in proc.stderr
    if before is not None:
        assert db.read_bytes() == before


@pytest.mark.parametrize("kind", ["garbage", "directory", "foreign"])
def test_sweep_db_that_is_not_a_store_is_an_error(tmp_path: Path, kind: str):
    spec = tmp_path / "s.toml"
    (tmp_path / "base.toml").write_text(TINY_TOML)
    spec.write_text('[sweep]\nbase = "base.toml"\n[grid]\n"workload.window" = [1, 2]\n')
    db = tmp_path / "x.db"
    if kind == "garbage":
        db.write_bytes(b"\x00garbage" * 300)
    elif kind == "directory":
        db.mkdir()
    else:
        con = sqlite3.connect(db)
        con.execute("CREATE TABLE people (name TEXT)")
        con.commit()
        con.close()
    proc = run_cli("sweep", str(spec), "--db", str(db), "--workers", "1", "--quiet")
    no_traceback(proc)
    assert proc.returncode == 2, proc.stderr
    assert str(db) in proc.stderr


# -- items 6 and 7: sweep workers ---------------------------------------------------------------
def test_a_point_that_kills_its_worker_is_stored_as_failed_and_retried(tmp_path: Path, monkeypatch):
    marker = tmp_path / "abort-now"
    marker.write_text("")
    monkeypatch.setenv("FABRICSIM_TEST_ABORT_FILE", str(marker))
    monkeypatch.syspath_prepend(str(TESTS))
    db = tmp_path / "s.db"
    kw = dict(
        grid={"workload.requests": [100, 123, 150]},
        db=db,
        workers=1,
        progress=False,
        extract="helpers.sweep_extract:abort_on_123_requests",
        metrics=["requests.completed"],
    )
    df = fabricsim.sweep(TINY_DICT, **kw)
    assert sorted(df["status"]) == ["error", "ok", "ok"]
    bad = df[df["status"] == "error"].iloc[0]
    assert bad["workload.requests"] == 123 and "SIGABRT" in bad["error"]
    # resuming skips it; --retry-failed runs it again
    df = fabricsim.sweep(TINY_DICT, **kw)
    assert (df["status"] == "error").sum() == 1
    marker.unlink()
    df = fabricsim.sweep(TINY_DICT, retry_failed=True, **kw)
    assert (df["status"] == "ok").all()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_kill_9_of_a_sweep_takes_its_workers_with_it(tmp_path: Path):
    (tmp_path / "base.toml").write_text(TINY_TOML.replace("requests = 200", "requests = 50000000"))
    spec = tmp_path / "s.toml"
    spec.write_text('[sweep]\nbase = "base.toml"\n[grid]\n"workload.window" = [1, 2, 3, 4]\n')
    proc = subprocess.Popen(
        [sys.executable, "-m", "fabricsim", "sweep", str(spec), "--workers", "2", "--quiet"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )

    def children() -> list[int]:
        try:
            text = Path(f"/proc/{proc.pid}/task/{proc.pid}/children").read_text()
        except OSError:
            return []
        return [int(c) for c in text.split()]

    deadline = time.monotonic() + 20
    kids: list[int] = []
    while time.monotonic() < deadline and len(kids) < 2:
        time.sleep(0.2)
        kids = children()
    assert len(kids) == 2
    proc.kill()
    proc.wait()
    deadline = time.monotonic() + 5
    alive = kids
    while alive and time.monotonic() < deadline:
        time.sleep(0.1)
        alive = [k for k in alive if Path(f"/proc/{k}").exists() and "Z" not in _state(k)]
    assert not alive, f"workers {alive} outlived the sweep"


def _state(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(")")[1].split()[0]
    except (OSError, IndexError):
        return "Z"


def test_a_deadlocked_sweep_point_is_not_stored_as_ok(tmp_path: Path):
    cfg = dict(TINY_DICT, sim={"seed": 1, "max_time": "50ns"})
    df = fabricsim.sweep(cfg, grid={"workload.window": [1]}, db=tmp_path / "d.db", workers=1, progress=False)
    assert df["status"].tolist() == ["error"]
    assert "time_limit" in df["error"].iloc[0]


# -- part 2: nonsense accepted silently, clearer messages ------------------------------------
def test_duplicate_names_and_keys_of_another_kind_are_config_errors(tiny_dict):
    cfg = copy.deepcopy(tiny_dict)
    cfg["requester"].append({"name": "host0"})
    with pytest.raises(fabricsim.ConfigError, match=r"requester\[1\]\.name: \"host0\" is already the name of"):
        fabricsim.validate(cfg)
    with pytest.raises(fabricsim.ConfigError, match=r"fabric\.buffer: 0B: smaller than the largest packet"):
        fabricsim.validate(tiny_dict, set={"fabric.buffer": "0B"})
    with pytest.raises(fabricsim.ConfigError, match=r"link\[0\]\.turnaround: does not apply to a full-duplex"):
        fabricsim.validate(tiny_dict, set={"link[0].turnaround": "5ns"})


def test_german_check_with_symmetry_counts_orbits(tmp_path: Path):
    cfg = tmp_path / "g.toml"
    cfg.write_text('[protocol]\nname = "german"\n[check]\ncaches = 2\nsymmetry = true\n')
    proc = run_cli("check", str(cfg), "--json")
    no_traceback(proc)
    report = json.loads(proc.stdout)
    assert proc.returncode == 0 and report["states"] == 852 and report["symmetry"], proc.stdout


def test_check_rejects_zero_threads(tmp_path: Path):
    cfg = tmp_path / "g.toml"
    cfg.write_text('[protocol]\nname = "german"\n[check]\ncaches = 2\nthreads = 0\n')
    proc = run_cli("check", str(cfg))
    no_traceback(proc)
    assert proc.returncode == 2 and "check.threads: 0: expected 1 to 1024" in proc.stderr, proc.stderr


def test_a_key_in_both_grid_and_zip_is_an_error():
    with pytest.raises(fabricsim.ConfigError, match=r'zip\."workload.window": also in grid'):
        sweeps.build(TINY_DICT, grid={"workload.window": [1, 2]}, zip={"workload.window": [3, 4]})


def test_reported_time_stops_at_max_time():
    r = fabricsim.run(TINY_TOML, set={"sim.max_time": "100ns", "workload.requests": 100000}, progress=False)
    assert r.summary["outcome"] == "time_limit"
    assert r.summary["sim_time_ps"] <= 100_000, r.summary["sim_time_ps"]


def test_override_errors_name_the_override(tmp_path: Path):
    cfg = tmp_path / "t.toml"
    cfg.write_text(TINY_TOML)
    proc = run_cli("validate", str(cfg), "--set", "a.b=")
    assert proc.returncode == 2 and "error: --set a.b=: a: unknown key" in proc.stderr, proc.stderr
    proc = run_cli("validate", str(cfg), "--set", "link[0].a=mem0")
    assert proc.returncode == 2 and "error: --set link[0].a=mem0: link[0].b:" in proc.stderr, proc.stderr
    proc = run_cli("validate", str(cfg), "--set", "defaults.link.bandwidth=1e400GB/s")
    assert proc.returncode == 2 and "out of range" in proc.stderr and "unknown unit" not in proc.stderr


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), None])
def test_nan_inf_and_none_in_a_dict_name_the_key(tiny_dict, bad):
    tiny_dict["workload"]["read_fraction"] = bad
    with pytest.raises(fabricsim.ConfigError, match=r"^<python>: workload\.read_fraction: ") as exc:
        fabricsim.run(tiny_dict, progress=False)
    assert "JSON" not in str(exc.value)


def test_a_seed_past_64_bits_is_a_config_error(tiny_dict, tmp_path: Path):
    with pytest.raises(fabricsim.ConfigError, match=r"seed = 18446744073709551616: expected an integer from 0"):
        fabricsim.run(tiny_dict, seed=2**64, progress=False)
    big = copy.deepcopy(tiny_dict)
    big["sim"]["seed"] = 2**64
    with pytest.raises(fabricsim.ConfigError, match=r"^<python>: sim\.seed: 18446744073709551616: out of range"):
        fabricsim.validate(big)
    with pytest.raises(fabricsim.ConfigError, match="sweep.seeds"):
        sweeps.build(TINY_DICT, grid={"workload.window": [1]}, seeds=[2**64])
    cfg = tmp_path / "t.toml"
    cfg.write_text(TINY_TOML)
    proc = run_cli("run", str(cfg), "--seed", str(2**64))
    no_traceback(proc)
    assert proc.returncode == 2 and "seed" in proc.stderr, proc.stderr


def test_an_unusable_out_or_chart_fails_before_the_run(tmp_path: Path):
    cfg = tmp_path / "t.toml"
    cfg.write_text(TINY_TOML.replace("requests = 200", "requests = 20000000"))  # would take minutes
    blocker = tmp_path / "file"
    blocker.write_text("")
    for out, why in [
        ("", "expected a directory path"),
        (str(blocker), "not a directory"),
        (str(blocker / "sub"), "cannot write there"),
    ]:
        t0 = time.monotonic()
        proc = run_cli("run", str(cfg), "--out", out, "-q")
        no_traceback(proc)
        assert proc.returncode == 2 and "--out" in proc.stderr and why in proc.stderr, proc.stderr
        assert time.monotonic() - t0 < 20
    with pytest.raises(fabricsim.ConfigError, match="out = '': expected a directory path"):
        fabricsim.run(str(cfg), out="", progress=False)
    chk = tmp_path / "c.toml"
    chk.write_text('[protocol]\nname = "mesi"\n[check]\ncaches = 2\nmutant = "forget-sharer"\n')
    proc = run_cli("check", str(chk), "--chart", str(blocker / "x.svg"))
    no_traceback(proc)
    assert proc.returncode == 2 and "--chart" in proc.stderr and "cannot write there" in proc.stderr, proc.stderr


def test_a_byte_order_mark_is_accepted_in_traces_and_litmus_files(tmp_path: Path):
    (tmp_path / "t.trace").write_text("\ufeff0 host0 R 0x40 64\n10 host0 W 0x80 64\n", encoding="utf-8")
    cfg = tmp_path / "t.toml"
    cfg.write_text(TINY_TOML.replace('pattern = "uniform"', 'pattern = "trace"\ntrace = "t.trace"'))
    r = fabricsim.run(str(cfg), progress=False)
    assert r.summary["outcome"] == "completed"
    lit = tmp_path / "MP.litmus"
    lit.write_text("\ufeff" + (LITMUS / "MP.litmus").read_text(), encoding="utf-8")
    proc = run_cli("litmus", str(lit), "--model", "sc")
    no_traceback(proc)
    assert proc.returncode == 0, proc.stderr


# -- limits a job respects (issue 34, item 8) --------------------------------------------------
def test_a_size_over_the_process_limit_is_refused_naming_the_limit(tmp_path: Path):
    """A 1400 x 1400 mesh (about 4.7 GB of per-link state) fits the machine but not a job
    limited by ``ulimit -v`` to 3 GB: validation refuses it, naming the limit, with exit 2
    (before, it passed and the run aborted on an allocation)."""
    import resource

    cfg = tmp_path / "mesh.toml"
    cfg.write_text(
        '[topology]\nkind = "mesh"\nrequesters = 2\nmemories = 2\nrows = 1400\ncols = 1400\n[workload]\nrequests = 10\n'
    )

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (3_000_000_000, resource.RLIM_INFINITY))

    env = {k: v for k, v in os.environ.items() if k != "FABRICSIM_MEMORY_LIMIT"}
    proc = subprocess.run(
        [sys.executable, "-m", "fabricsim", "validate", str(cfg)],
        capture_output=True,
        text=True,
        preexec_fn=limit,
        env=env,
        timeout=120,
    )
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "topology.rows" in proc.stderr and "ulimit -v" in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stderr and "memory allocation" not in proc.stderr
