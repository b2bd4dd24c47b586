"""`fabricsim run --profile` and `fabricsim.run(profile=True)`: events by kind and the share
of wall time by part, only when asked (docs/performance.md, "Where the time goes")."""

from __future__ import annotations

import json
from pathlib import Path

import fabricsim

REPO = Path(__file__).resolve().parents[1]
MESI = REPO / "examples" / "mesi_64core.toml"
SMALL = {"workload.requests": 200, "workload.warmup": 20}


def check_profile(summary: dict, engine: str) -> dict:
    p = summary["profile"]
    assert p["engine"] == engine
    assert sum(p["events"].values()) == p["events_total"] == summary["events"]
    assert abs(sum(p["wall_share"].values()) - 1.0) < 1e-3, p["wall_share"]
    assert set(p["wall_share"]) == {"fabric", "protocol", "caches", "dram", "driver", "queue"}
    assert p["events_per_s"] > 0
    return p


def test_protocol_run_profile_and_the_same_simulation():
    plain = fabricsim.run(MESI, set=SMALL, progress=False)
    profiled = fabricsim.run(MESI, set=SMALL, progress=False, profile=True)
    assert "profile" not in plain.summary
    p = check_profile(profiled.summary, "protocol")
    assert p["events"]["dram_wake"] > 0 and p["wall_share"]["dram"] > 0
    # only the profile is added: everything simulated is the same
    without = profiled.deterministic_summary()
    del without["profile"]
    assert without == plain.deterministic_summary()
    assert "wall %" in profiled.text and "wall %" not in plain.text


def test_request_response_run_profile(tiny_toml):
    r = fabricsim.run(tiny_toml, progress=False, profile=True)
    p = check_profile(r.summary, "request_response")
    assert p["events"]["issue"] == 200
    # fixed-latency memories: no DRAM time
    assert p["wall_share"]["dram"] == 0


def test_cli_profile_flag(cli, tiny_file):
    proc = cli("run", str(tiny_file), "--json", "--profile")
    assert proc.returncode == 0, proc.stderr
    check_profile(json.loads(proc.stdout), "request_response")
    proc = cli("run", str(tiny_file), "--profile")
    assert proc.returncode == 0, proc.stderr
    assert "M events/s" in proc.stdout and "wall %" in proc.stdout
    proc = cli("run", str(tiny_file), "--json")
    assert "profile" not in json.loads(proc.stdout)
    assert "--profile" in cli("run", "--help").stdout
