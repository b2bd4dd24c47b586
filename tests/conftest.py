"""Shared configurations for the Python-layer tests.

The tests run against the real extension module, installed with `pip install .`.
TINY_TOML and TINY_DICT describe the same system; keep them in step with the core's schema
(crates/fabricsim/src/config/schema.rs).
"""

from __future__ import annotations

import copy
import signal
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]

TINY_TOML = """\
name = "tiny"

[sim]
seed = 1

[defaults.link]
bandwidth = "64GB/s"
latency = "1ns"

[[requester]]
name = "host0"

[[memory]]
name = "mem0"

[[link]]
a = "host0"
b = "mem0"

[workload]
pattern = "uniform"
requests = 200
"""

TINY_DICT = {
    "name": "tiny",
    "sim": {"seed": 1},
    "defaults": {"link": {"bandwidth": "64GB/s", "latency": "1ns"}},
    "requester": [{"name": "host0"}],
    "memory": [{"name": "mem0"}],
    "link": [{"a": "host0", "b": "mem0"}],
    "workload": {"pattern": "uniform", "requests": 200},
}


@pytest.fixture
def tiny_toml() -> str:
    return TINY_TOML


@pytest.fixture
def tiny_dict() -> dict:
    return copy.deepcopy(TINY_DICT)


@pytest.fixture
def tiny_file(tmp_path: Path) -> Path:
    path = tmp_path / "tiny.toml"
    path.write_text(TINY_TOML, encoding="utf-8")
    return path


def sigint_default() -> None:
    """A child's SIGINT back to the default before it starts (``preexec_fn``): a shell's
    background job starts with SIGINT ignored, Python then keeps ignoring it, and a test
    of Ctrl-C would wait for ever; the tests must not depend on how pytest was started."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def run_cli(*args: str, cwd: Path | None = None, timeout: float = 600) -> subprocess.CompletedProcess:
    """Run `python -m fabricsim ARGS...` and capture its output (stdin closed, not a tty)."""
    return subprocess.run(
        [sys.executable, "-m", "fabricsim", *args],
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


@pytest.fixture
def cli(tmp_path: Path):
    """`cli("run", ...)` runs the command line in a scratch directory (unless cwd= is given)."""

    def call(*args: str, cwd: Path | None = None, timeout: float = 600):
        return run_cli(*args, cwd=cwd if cwd is not None else tmp_path, timeout=timeout)

    return call
