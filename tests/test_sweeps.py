"""Sweeps: validation before running, backends that agree, a store that survives
a killed worker, failures that are stored and reported."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

import fabricsim
from fabricsim import sweeps

TINY = {
    "name": "tiny",
    "defaults": {"link": {"bandwidth": "64GB/s", "latency": "1ns"}},
    "requester": [{"name": "host0"}],
    "memory": [{"name": "mem0"}],
    "link": [{"a": "host0", "b": "mem0"}],
    "workload": {"pattern": "uniform", "requests": 300},
}
GRID = {"workload.window": [1, 4, 16], "workload.read_fraction": [0.0, 1.0]}
METRICS = ["throughput_GBps", "latency_ns.mean", "links.utilization.max", "links[host0->mem0].busy_ns"]


def metrics_by_point(df):
    cols = ["workload.window", "workload.read_fraction", "seed", *METRICS]
    return df[cols].sort_values(cols[:3]).reset_index(drop=True)


def test_spec_errors_name_the_key(tmp_path):
    spec = tmp_path / "s.toml"
    spec.write_text('[sweep]\nname = "x"\nbase = "c.toml"\nsede = [1]\n')
    with pytest.raises(fabricsim.ConfigError, match=r"s\.toml: sweep\.sede: unknown key"):
        sweeps.load_spec(spec)
    spec.write_text('[sweep]\nbase = "c.toml"\n[grid]\n"workload.window" = 4\n')
    (tmp_path / "c.toml").write_text("[[requester]]\nname='r'\n[[memory]]\nname='m'\n[[link]]\na='r'\nb='m'\n")
    with pytest.raises(fabricsim.ConfigError, match=r'grid\."workload\.window": expected a non-empty list'):
        sweeps.load_spec(spec)


def test_override_of_a_missing_key_fails_before_anything_runs(tmp_path):
    db = tmp_path / "x.db"
    with pytest.raises(fabricsim.ConfigError, match=r'grid\."workload\.windw".*unknown key'):
        fabricsim.sweep(TINY, grid={"workload.windw": [1, 2]}, db=db)
    assert not db.exists()


def test_one_and_two_workers_store_identical_metrics(tmp_path):
    one = fabricsim.sweep(TINY, grid=GRID, seeds=[1, 2], metrics=METRICS, db=tmp_path / "1.db", workers=1)
    two = fabricsim.sweep(TINY, grid=GRID, seeds=[1, 2], metrics=METRICS, db=tmp_path / "2.db", workers=2)
    assert len(one) == 12 and (one["status"] == "ok").all()
    assert metrics_by_point(one).equals(metrics_by_point(two))
    # a re-run finds everything stored and runs nothing
    again = fabricsim.sweep(TINY, grid=GRID, seeds=[1, 2], metrics=METRICS, db=tmp_path / "1.db", workers=1)
    assert again["wall_s"].tolist() == one["wall_s"].tolist()


def test_dask_local_cluster_matches_local_processes(tmp_path):
    pytest.importorskip("dask.distributed")
    local = fabricsim.sweep(TINY, grid=GRID, metrics=METRICS, db=tmp_path / "l.db", workers=2)
    dask = fabricsim.sweep(TINY, grid=GRID, metrics=METRICS, db=tmp_path / "d.db", dask="local", workers=2)
    assert metrics_by_point(local).equals(metrics_by_point(dask))


def test_a_failed_point_is_stored_with_its_error_and_not_retried_silently(tmp_path, capsys):
    db = tmp_path / "f.db"
    limited = {**TINY, "sim": {"max_time": "1ns"}}  # every point stops at its time limit
    df = fabricsim.sweep(limited, grid={"workload.window": [1, 2]}, metrics=["latency_ns.mean"], db=db, workers=1)
    assert (df["status"] == "error").all()
    assert "did not complete" in df["error"].iloc[0]
    assert "2 of 2 points failed" in capsys.readouterr().err
    again = fabricsim.sweep(limited, grid={"workload.window": [1, 2]}, metrics=["latency_ns.mean"], db=db, workers=1)
    assert again["wall_s"].tolist() == df["wall_s"].tolist()  # not re-run
    assert "2 of 2 points failed" in capsys.readouterr().err


def test_a_misspelt_metric_stops_the_sweep_at_the_first_point_with_a_suggestion(tmp_path):
    db = tmp_path / "m.db"
    with pytest.raises(fabricsim.ConfigError, match=r"sweep\.metrics: metric 'latency_ns\.p999'.*did you mean"):
        fabricsim.sweep(TINY, grid={"workload.window": [1, 2, 4]}, metrics=["latency_ns.p999"], db=db, workers=1)
    with sqlite3.connect(db) as c:
        stored = c.execute("select count(*) from sqlite_master where type = 'table'").fetchone()[0]
        rows = c.execute("select count(*) from points").fetchone()[0] if stored else 0
    assert rows == 0  # no point was run and stored as failed


def _children(pid: int) -> list[int]:
    kids = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                kids.append(int(entry))
    return kids


def _newest(pids: list[int]) -> int:
    """The most recently started of ``pids`` (each point runs in its own process, so this one has
    just begun its point; an older one may have sent its row and be exiting)."""

    def started(pid: int) -> int:
        try:
            return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[19])
        except OSError:
            return -1

    return max(pids, key=started)


def _stored(db: Path) -> int:
    if not db.exists():
        return 0
    try:
        with sqlite3.connect(db) as c:
            return c.execute("SELECT COUNT(*) FROM points").fetchone()[0]
    except sqlite3.OperationalError:
        return 0


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc to find the workers")
def test_killing_a_worker_loses_no_finished_point_and_resume_completes(tmp_path):
    base = tmp_path / "base.toml"
    base.write_text((Path(__file__).resolve().parents[1] / "examples" / "spine_leaf.toml").read_text())
    spec = tmp_path / "spec.toml"
    spec.write_text(
        '[sweep]\nname = "kill"\nbase = "base.toml"\nseeds = [1, 2, 3, 4, 5, 6]\n'
        'metrics = ["throughput_GBps", "latency_ns.p99", "requests.completed"]\n'
        '[grid]\n"workload.requests" = [60000]\n"workload.read_fraction" = [0.5, 1.0]\n'
    )
    db = tmp_path / "kill.db"
    proc = subprocess.Popen(
        [sys.executable, "-m", "fabricsim", "sweep", str(spec), "--workers", "2", "--db", str(db), "--quiet"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 60
    while _stored(db) < 2 and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    workers = _children(proc.pid)
    assert proc.poll() is None and workers, "the sweep finished before a worker could be killed"
    # kill a worker in the middle of its point: the newest (one that already sent its row
    # would exit without failing any point)
    os.kill(_newest(workers), signal.SIGKILL)
    out, err = proc.communicate(timeout=120)
    # The killed point is stored as that point's failure, naming the signal; the sweep goes on.
    assert proc.returncode == 1, (out, err)
    assert "killed by signal SIGKILL" in err
    assert _stored(db) == 12
    killed = fabricsim.load(db)
    assert (killed["status"] == "error").sum() == 1

    resumed = subprocess.run(
        [
            sys.executable,
            "-m",
            "fabricsim",
            "sweep",
            str(spec),
            "--workers",
            "2",
            "--db",
            str(db),
            "--quiet",
            "--retry-failed",
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert resumed.returncode == 0, resumed.stderr
    after = fabricsim.load(db)
    assert len(after) == 12 and after["key"].is_unique and (after["status"] == "ok").all()

    clean = fabricsim.sweep(
        base,
        grid={"workload.requests": [60000], "workload.read_fraction": [0.5, 1.0]},
        seeds=[1, 2, 3, 4, 5, 6],
        metrics=["throughput_GBps", "latency_ns.p99", "requests.completed"],
        name="kill",
        db=tmp_path / "clean.db",
        workers=2,
    )
    cols = ["workload.read_fraction", "seed", "throughput_GBps", "latency_ns.p99", "requests.completed"]
    key = ["workload.read_fraction", "seed"]
    assert (
        after[cols].sort_values(key).reset_index(drop=True).equals(clean[cols].sort_values(key).reset_index(drop=True))
    )


def test_results_command_exports_csv(tmp_path):
    db = tmp_path / "r.db"
    fabricsim.sweep(TINY, grid={"workload.window": [1, 2]}, metrics=["throughput_GBps"], db=db, workers=1)
    proc = subprocess.run(
        [sys.executable, "-m", "fabricsim", "results", str(db), "--csv", str(tmp_path / "r.csv")],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr
    import pandas as pd

    df = pd.read_csv(tmp_path / "r.csv")
    assert sorted(df["workload.window"]) == [1, 2] and "throughput_GBps" in df


def test_results_have_named_ordered_columns_and_units_as_numbers(tmp_path):
    df = fabricsim.sweep(
        TINY,
        grid={"defaults.link.bandwidth": ["128GB/s", "32GB/s"], "workload.window": [2]},
        metrics=["throughput_GBps"],
        db=tmp_path / "u.db",
        workers=1,
    )
    cols = list(df.columns)
    assert cols[:5] == ["sweep", "seed", "defaults.link.bandwidth", "defaults.link.bandwidth [B/s]", "workload.window"]
    assert cols[-5:] == ["status", "error", "wall_s", "version", "key"]
    # as text "128GB/s" sorts before "32GB/s"; as numbers it does not
    by_number = df.sort_values("defaults.link.bandwidth [B/s]")["defaults.link.bandwidth"].tolist()
    assert by_number == ["32GB/s", "128GB/s"]
    assert sweeps_unit("32KiB") == (32768.0, "B") and sweeps_unit("1.5ns") == pytest.approx((1.5e-9, "s"))
    assert sweeps_unit("64") is None and sweeps_unit("fast") is None


def sweeps_unit(text):
    from fabricsim.store import unit_value

    return unit_value(text)


def test_plot_draws_a_line_per_value_with_numbers_for_units(tmp_path):
    db = tmp_path / "p.db"
    fabricsim.sweep(
        TINY,
        grid={"defaults.link.bandwidth": ["128GB/s", "32GB/s"], "workload.window": [1, 4]},
        metrics=["throughput_GBps"],
        db=db,
        workers=1,
    )
    ax = fabricsim.plot(db, x="defaults.link.bandwidth", y="throughput_GBps", by="workload.window")
    lines = ax.get_lines()
    assert [ln.get_label() for ln in lines] == ["workload.window = 1", "workload.window = 4"]
    # x in numbers (GB/s), ordered as numbers, not as text ("128GB/s" < "32GB/s")
    assert list(lines[0].get_xdata()) == pytest.approx([32.0, 128.0])
    assert ax.get_xlabel() == "defaults.link.bandwidth [GB/s]"
    df = fabricsim.load(db)
    for ln, window in zip(lines, [1, 4]):
        want = df[df["workload.window"] == window].sort_values("defaults.link.bandwidth [B/s]")["throughput_GBps"]
        assert list(ln.get_ydata()) == pytest.approx(list(want))


def test_plot_command_writes_a_picture_and_names_a_wrong_column(tmp_path):
    db = tmp_path / "p.db"
    fabricsim.sweep(TINY, grid={"workload.window": [1, 2]}, metrics=["throughput_GBps"], db=db, workers=1)
    out = tmp_path / "p.svg"
    cmd = [sys.executable, "-m", "fabricsim", "plot", str(db), "--y", "throughput_GBps", "-o", str(out)]
    proc = subprocess.run([*cmd, "--x", "workload.window"], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert out.read_text().lstrip().startswith("<?xml")
    proc = subprocess.run([*cmd, "--x", "workload.windo"], capture_output=True, text=True)
    assert proc.returncode == 2
    assert "did you mean 'workload.window'" in proc.stderr
