"""Issue 10: the Python input surface fuzzed with Hypothesis: configuration dicts given to
``fabricsim.validate``/``fabricsim.run``, ``--set`` strings and sweep specifications. Any input
gets a result or a :class:`fabricsim.ConfigError` naming where it is; never another exception.

A short pass runs in the normal suite (about 50 examples per property); a long one on demand:

    FABRICSIM_FUZZ=long pytest tests/test_fuzz.py
"""

from __future__ import annotations

import copy
import os

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import fabricsim
from conftest import TINY_DICT, TINY_TOML
from fabricsim import sweeps

LONG = os.environ.get("FABRICSIM_FUZZ") == "long"
FUZZ = settings(
    max_examples=5000 if LONG else 50,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    database=None,
)

KEYS = [
    "name",
    "sim.seed",
    "sim.max_time",
    "fabric.buffer",
    "fabric.routing",
    "fabric.spread",
    "defaults.link.bandwidth",
    "defaults.link.duplex",
    "defaults.link.turnaround",
    "defaults.memory.queue",
    "requester[0].name",
    "requester[0].workload",
    "memory[0].name",
    "link[0].a",
    "link[0].b",
    "link[0].bandwidth",
    "link[0].turnaround",
    "link[3].a",
    "workload.pattern",
    "workload.requests",
    "workload.line",
    "workload.window",
    "workload.read_fraction",
    "workload.header_overhead",
    "workload.injection",
    "workload.rate",
    "workload.targets",
    "topology.kind",
    "topology.rows",
    "topology.switches",
    "topology.requesters",
    "protocol.name",
    "protocol.values",
    "bogus",
    "workload.bogus",
    "a.b",
]

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-5, max_value=70),
    st.integers(),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from(
        ["64B", "1ns", "64GB/s", "1e400GB/s", "0B", "auto", "uniform", "trace", "half", "mesh", "msi", "host0", "mem0"]
    ),
    st.text(max_size=12),
)
values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=6,
)


def _set_path(cfg: dict, key: str, value) -> None:
    """Set a dotted key (with list indexes) in a config dict, creating tables as needed."""
    parts: list = []
    for part in key.split("."):
        name, _, rest = part.partition("[")
        parts.append(name)
        if rest:
            parts.append(int(rest.rstrip("]")))
    cur = cfg
    for p, nxt in zip(parts, parts[1:]):
        if isinstance(p, int):
            if not isinstance(cur, list) or p >= len(cur):
                return
            cur = cur[p]
        else:
            if not isinstance(cur, dict):
                return
            if not isinstance(cur.get(p), (dict, list)):
                cur[p] = [] if isinstance(nxt, int) else {}
            cur = cur[p]
    last = parts[-1]
    if isinstance(last, int):
        if isinstance(cur, list) and last < len(cur):
            cur[last] = value
    elif isinstance(cur, dict):
        cur[last] = value


def _only_config_errors(call) -> None:
    try:
        call()
    except fabricsim.ConfigError as exc:
        msg = str(exc)
        assert msg.strip(), "empty message"
        return
    # any other exception propagates and fails the property


@FUZZ
@given(st.lists(st.tuples(st.sampled_from(KEYS), values), min_size=1, max_size=4))
def test_config_dicts_give_a_result_or_a_config_error_naming_the_key(changes):
    cfg = copy.deepcopy(TINY_DICT)
    for key, value in changes:
        _set_path(cfg, key, value)
    try:
        fabricsim.validate(cfg)
    except fabricsim.ConfigError as exc:
        msg = str(exc)
        assert msg.startswith("<python>"), msg
        # None, NaN and infinity are named by key, not as a column of the JSON the core reads
        assert "JSON error" not in msg, msg
        return
    # Valid: it also runs (kept short: this fuzzes the input, not the simulator).
    _only_config_errors(
        lambda: fabricsim.run(
            cfg, set={"workload.requests": 5, "workload.warmup": 0, "sim.max_time": "20us"}, progress=False
        )
    )


@FUZZ
@given(st.text(max_size=40))
def test_set_strings_give_a_config_error_naming_the_override(text):
    item = text if "=" in text else f"{text}="
    try:
        fabricsim.validate(TINY_TOML, set=[item])
    except fabricsim.ConfigError as exc:
        msg = str(exc)
        assert msg.startswith("--set ") or msg.startswith("<string>") or msg.startswith("override "), msg


@FUZZ
@given(
    st.dictionaries(st.sampled_from(KEYS), st.lists(scalars, max_size=3), max_size=3),
    st.dictionaries(st.sampled_from(KEYS), st.lists(scalars, min_size=1, max_size=3), max_size=2),
    st.lists(st.integers(min_value=-2, max_value=2**65), min_size=0, max_size=3),
)
def test_sweep_specs_give_a_config_error_naming_the_table_and_key(grid, zipped, seeds):
    try:
        sweeps.build(TINY_DICT, grid=grid, zip=zipped, seeds=seeds)
    except fabricsim.ConfigError as exc:
        assert str(exc).startswith("<python>: "), str(exc)
