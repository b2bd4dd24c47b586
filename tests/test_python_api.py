"""The Python API: fabricsim.run / validate / bench and Result."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

import fabricsim
from fabricsim import ConfigError, Result
from fabricsim._config import load_config, overrides_list

TABLES = ("links", "latency", "requesters", "classes")


def without_timing(summary: dict) -> dict:
    summary = dict(summary)
    summary.pop("wall_s", None)
    return summary


# -- run ----------------------------------------------------------------------------------
def test_run_dict_returns_result_with_tables(tiny_dict):
    result = fabricsim.run(tiny_dict, progress=False)
    assert isinstance(result, Result)
    summary = result.summary
    assert summary["requests"]["completed"] == 200
    assert summary["config_name"] == "tiny"
    assert summary["deadlock"] is False
    for name in TABLES:
        frame = getattr(result, name)
        assert isinstance(frame, pd.DataFrame), name
        assert not frame.empty, name
        assert len(frame.columns) > 0, name
    assert "host0" in result.text
    assert "tiny" in repr(result)


def test_summary_has_documented_keys(tiny_dict):
    summary = fabricsim.run(tiny_dict, progress=False).summary
    for key in (
        "fabricsim_version",
        "config_name",
        "seed",
        "sim_time_ps",
        "events",
        "wall_s",
        "requests",
        "throughput_GBps",
        "latency_ns",
        "deadlock",
        "warnings",
    ):
        assert key in summary, key
    assert summary["fabricsim_version"] == fabricsim.__version__


def test_run_toml_text(tiny_toml):
    result = fabricsim.run(tiny_toml, progress=False)
    assert result.summary["requests"]["completed"] == 200


def test_run_path_as_str_and_pathlike(tiny_file: Path):
    by_str = fabricsim.run(str(tiny_file), progress=False)
    by_path = fabricsim.run(tiny_file, progress=False)
    assert by_str.summary["requests"]["completed"] == 200
    assert without_timing(by_str.summary) == without_timing(by_path.summary)


def test_dict_and_toml_give_the_same_summary(tiny_dict, tiny_toml):
    from_dict = fabricsim.run(tiny_dict, seed=3, progress=False)
    from_toml = fabricsim.run(tiny_toml, seed=3, progress=False)
    assert without_timing(from_dict.summary) == without_timing(from_toml.summary)
    for name in TABLES:
        assert from_dict.csv(name) == from_toml.csv(name), name


def test_seed_argument_is_used(tiny_dict):
    assert fabricsim.run(tiny_dict, seed=5, progress=False).summary["seed"] == 5


def test_seed_must_be_an_integer(tiny_dict):
    with pytest.raises(TypeError):
        fabricsim.run(tiny_dict, seed="5", progress=False)


# -- determinism and output files -------------------------------------------------------------
def test_write_twice_gives_identical_bytes(tiny_dict, tmp_path: Path):
    first = fabricsim.run(tiny_dict, seed=7, progress=False).write(tmp_path / "a")
    second = fabricsim.run(tiny_dict, seed=7, progress=False).write(tmp_path / "b")
    names = sorted(p.name for p in first.iterdir())
    assert names == sorted(p.name for p in second.iterdir())
    for expected in ("summary.json", "timing.json", *(f"{t}.csv" for t in TABLES)):
        assert expected in names
    for name in names:
        if name == "timing.json":
            continue
        assert (first / name).read_bytes() == (second / name).read_bytes(), name

    summary = json.loads((first / "summary.json").read_text())
    assert "wall_s" not in summary
    assert summary["requests"]["completed"] == 200
    assert "wall_s" in json.loads((first / "timing.json").read_text())


def test_written_csv_is_the_core_text(tiny_dict, tmp_path: Path):
    result = fabricsim.run(tiny_dict, progress=False, out=tmp_path / "out")
    assert (tmp_path / "out" / "links.csv").read_text(encoding="utf-8") == result.csv("links")
    frame = pd.read_csv(tmp_path / "out" / "links.csv")
    pd.testing.assert_frame_equal(frame, result.links)


# -- overrides ----------------------------------------------------------------------------
def test_set_list_changes_the_run(tiny_dict):
    result = fabricsim.run(tiny_dict, set=["workload.requests=50"], progress=False)
    assert result.summary["requests"]["completed"] == 50


def test_set_dict_changes_the_run(tiny_toml):
    result = fabricsim.run(tiny_toml, set={"workload.requests": 50}, progress=False)
    assert result.summary["requests"]["completed"] == 50


def test_overrides_list_conversion():
    assert overrides_list(None) == []
    assert overrides_list("a.b=1") == ["a.b=1"]
    assert overrides_list(["a=1", "b=x"]) == ["a=1", "b=x"]
    assert overrides_list({"w.n": 50, "w.f": 0.5, "w.on": True, "w.off": False, "fabric.link.bandwidth": "64GB/s"}) == [
        "w.n=50",
        "w.f=0.5",
        "w.on=true",
        "w.off=false",
        "fabric.link.bandwidth=64GB/s",
    ]
    assert overrides_list({"w.list": [1, "a"]}) == ['w.list=[1, "a"]']
    with pytest.raises(ConfigError):
        overrides_list(["no-equals-sign"])


def test_load_config_kinds(tiny_dict, tiny_toml, tiny_file):
    assert load_config(tiny_dict).source == "<python>"
    assert load_config(tiny_dict).fmt == "json"
    assert json.loads(load_config(tiny_dict).text) == tiny_dict
    assert load_config(tiny_toml).source == "<string>"
    assert load_config(tiny_toml).fmt == "toml"
    assert load_config(str(tiny_file)).source == str(tiny_file)
    assert load_config(tiny_file).text == tiny_toml
    with pytest.raises(TypeError):
        load_config(42)


# -- validation ---------------------------------------------------------------------------
def test_validate_returns_resolved_config(tiny_dict):
    resolved = fabricsim.validate(tiny_dict)
    assert isinstance(resolved, dict)
    assert resolved["name"] == "tiny"
    assert fabricsim.validate(tiny_dict, set={"workload.requests": 50})["workload"]["requests"] == 50


def test_unknown_key_in_dict_names_the_key(tiny_dict):
    tiny_dict["workload"]["bogus_knob"] = 1
    with pytest.raises(ConfigError) as info:
        fabricsim.run(tiny_dict, progress=False)
    assert "bogus_knob" in str(info.value)
    assert "<python>" in str(info.value)
    with pytest.raises(ConfigError, match="bogus_knob"):
        fabricsim.validate(tiny_dict)


def test_unknown_key_in_file_names_file_and_key(tiny_toml, tmp_path: Path):
    path = tmp_path / "bad.toml"
    path.write_text(tiny_toml.replace('pattern = "uniform"', 'patern = "uniform"'))
    with pytest.raises(ConfigError) as info:
        fabricsim.validate(path)
    message = str(info.value)
    assert "patern" in message
    assert str(path) in message


def test_unknown_override_key_is_an_error(tiny_dict):
    with pytest.raises(ConfigError, match="bogus_knob"):
        fabricsim.run(tiny_dict, set=["workload.bogus_knob=1"], progress=False)


def test_missing_file_is_a_config_error(tmp_path: Path):
    missing = tmp_path / "nowhere.toml"
    with pytest.raises(ConfigError, match="nowhere.toml"):
        fabricsim.run(missing, progress=False)


def test_config_error_is_a_value_error():
    assert issubclass(ConfigError, ValueError)


# -- progress and bench -------------------------------------------------------------------
def test_progress_callable_is_accepted(tiny_dict):
    calls = []
    result = fabricsim.run(tiny_dict, progress=lambda f, text: calls.append((f, text)))
    assert result.summary["requests"]["completed"] == 200
    for fraction, text in calls:
        assert 0.0 <= fraction <= 1.0
        assert isinstance(text, str)


def test_bench_quick_returns_figures():
    figures = fabricsim.bench(quick=True)
    assert isinstance(figures, dict)
    assert "engine" in figures
    for protocol in ("protocol_mesi_64core", "protocol_gcs_mind", "protocol_bi_superdome", "protocol_bi_tree"):
        assert figures[protocol]["outcome"] == "completed", protocol


def test_core_presets_are_the_named_cores_a_configuration_selects():
    presets = fabricsim.core_presets()
    assert set(presets) == {"gem5-o3-2ghz", "gem5-o3-3ghz", "skylake-sp", "sapphire-rapids"}
    sk = presets["skylake-sp"]
    # docs/cpu-presets.md's table
    assert (sk["rob"], sk["fill_buffers"], sk["store_buffer"], sk["cycle_ps"]) == (224, 12, 56, 400)
    assert (sk["l1"]["latency_cycles"], sk["l2"]["latency_cycles"], sk["l2"]["size"]) == (4, 14, 1 << 20)
    for name, p in presets.items():
        assert p["name"] == name and p["l1"]["size"] <= p["l2"]["size"], name
