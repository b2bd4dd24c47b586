"""The `fabricsim` command line, run as `python -m fabricsim` in a subprocess."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import fabricsim
from fabricsim import cli as cli_module

REPO = Path(__file__).resolve().parents[1]


def test_version(cli):
    proc = cli("--version")
    assert proc.returncode == 0
    assert proc.stdout.strip() == f"fabricsim {fabricsim.__version__}"


def test_help_lists_commands(cli):
    proc = cli("--help")
    assert proc.returncode == 0
    for command in ("run", "validate", "bench", "examples"):
        assert command in proc.stdout


def test_no_command_is_a_usage_error(cli):
    assert cli().returncode == 2


def test_run_prints_table(cli, tiny_file):
    proc = cli("run", str(tiny_file))
    assert proc.returncode == 0, proc.stderr
    assert "host0" in proc.stdout


def test_run_json_with_seed_and_set(cli, tiny_file):
    proc = cli("run", str(tiny_file), "--json", "--seed", "9", "--set", "workload.requests=50")
    assert proc.returncode == 0, proc.stderr
    summary = json.loads(proc.stdout)
    assert summary["seed"] == 9
    assert summary["requests"]["completed"] == 50


def test_run_out_writes_files(cli, tiny_file, tmp_path: Path):
    out = tmp_path / "out"
    proc = cli("run", str(tiny_file), "--out", str(out), "--quiet")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == ""
    assert (out / "links.csv").is_file()
    assert (out / "summary.json").is_file()
    assert (out / "timing.json").is_file()
    assert "completed" in json.loads((out / "summary.json").read_text())["requests"]


def test_run_out_is_deterministic(cli, tiny_file, tmp_path: Path):
    for name in ("a", "b"):
        proc = cli("run", str(tiny_file), "--seed", "4", "--out", str(tmp_path / name), "-q")
        assert proc.returncode == 0, proc.stderr
    for path in sorted((tmp_path / "a").iterdir()):
        if path.name != "timing.json":
            assert path.read_bytes() == (tmp_path / "b" / path.name).read_bytes(), path.name


def test_run_bad_config_exits_2(cli, tiny_toml, tmp_path: Path):
    bad = tmp_path / "bad.toml"
    bad.write_text(tiny_toml.replace("[sim]", "[sim]\nbogus_knob = 3"))
    proc = cli("run", str(bad))
    assert proc.returncode == 2
    assert proc.stderr.startswith("error: ")
    assert "bogus_knob" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_run_stops_at_a_protocol_error_and_exits_5(cli):
    # BI's tree delegate frees objects faster than bi_reclaim returns them through a 64-record log
    sets = ["nodes=64", "updates=0.5", 'time="2ms"', 'warmup="0ns"', 'period="20us"', "log_cap=64"]
    args = ["run", str(REPO / "examples" / "bi_superdome.toml"), "--set", 'sim.max_time="1s"']
    for kv in sets:
        args += ["--set", f"protocol.bi.tree.{kv}"]
    proc = cli(*args)
    assert proc.returncode == 5, proc.stderr
    assert "protocol error" in proc.stderr + proc.stdout and "object pool" in proc.stderr + proc.stdout
    assert "Traceback" not in proc.stderr


def test_validate_ok(cli, tiny_file):
    proc = cli("validate", str(tiny_file))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith(f"{tiny_file}: ok")


def test_a_decimal_cache_size_is_warned_not_refused(cli, tmp_path: Path):
    root = Path(__file__).resolve().parents[1]
    text = (root / "examples" / "mesi_64core.toml").read_text().replace('size = "256KiB"', 'size = "64KB"')
    cfg = tmp_path / "decimal.toml"
    cfg.write_text(text)
    proc = cli("validate", str(cfg))
    assert proc.returncode == 0, proc.stderr
    assert "warning: protocol.cache.size: 64000 B is a decimal size" in proc.stderr
    assert "125 sets" in proc.stderr
    with pytest.warns(fabricsim.ConfigWarning) as caught:
        fabricsim.validate(cfg)
    assert [("64KiB" in str(w.message), "125 sets" in str(w.message)) for w in caught] == [(True, False), (False, True)]
    r = fabricsim.run(cfg, set={"workload.requests": 20}, progress=False)
    assert any("decimal size" in w for w in r.warnings)
    proc = cli("validate", str(root / "examples" / "mesi_64core.toml"))
    assert "warning" not in proc.stderr


def test_validate_bad_file_exits_2_and_names_file(cli, tiny_toml, tmp_path: Path):
    bad = tmp_path / "broken_system.toml"
    bad.write_text(tiny_toml.replace('bandwidth = "64GB/s"', 'bandwidth = "-3GB/s"'))
    proc = cli("validate", str(bad))
    assert proc.returncode == 2
    assert "broken_system.toml" in proc.stderr
    assert "error:" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_validate_missing_file_exits_2(cli, tmp_path: Path):
    proc = cli("validate", str(tmp_path / "absent.toml"))
    assert proc.returncode == 2
    assert "absent.toml" in proc.stderr


def test_validate_bad_override_exits_2(cli, tiny_file):
    proc = cli("validate", str(tiny_file), "--set", "workload.bogus_knob=1")
    assert proc.returncode == 2
    assert "bogus_knob" in proc.stderr


def test_bench_json_quick(cli):
    proc = cli("bench", "--json", "--quick")
    assert proc.returncode == 0, proc.stderr
    assert "engine" in json.loads(proc.stdout)


def test_examples_run(cli, tmp_path: Path):
    files = sorted((REPO / "examples").glob("*.toml"))
    if not files:
        pytest.skip("no examples/*.toml in this checkout")
    out = tmp_path / "examples-out"
    proc = cli("examples", "--out", str(out), "--quiet", cwd=REPO)
    assert proc.returncode == 0, proc.stderr
    for path in files:
        assert f"== {path.stem} " in proc.stdout
        assert (out / path.stem / "summary.json").is_file()
        assert (out / path.stem / "links.csv").is_file()


# -- helpers, in process ------------------------------------------------------------------
def test_describe_config_counts_components():
    resolved = {"system": {"requesters": 2, "memories": 1, "switches": 0, "links": 3}}
    text = cli_module.describe_config(resolved)
    assert text == "2 requesters, 1 memory, 0 switches, 3 links"
    assert cli_module.describe_config({"name": "x"}) == ""


def test_validate_counts_generated_components(cli):
    proc = cli("validate", str(REPO / "examples" / "spine_leaf.toml"))
    assert proc.returncode == 0, proc.stderr
    assert "4 requesters, 4 memories, 6 switches, 16 links" in proc.stdout


def test_format_bench_flattens_figures():
    text = cli_module.format_bench({"engine": {"events_per_s": 12345678.9}, "quick": True})
    assert "engine.events_per_s" in text
    assert "12,345,679" in text


def test_main_returns_exit_code_for_usage_errors(capsys):
    assert cli_module.main(["run"]) == 2
    assert "CONFIG" in capsys.readouterr().err


def test_ctrl_c_stops_a_long_run_cleanly(tmp_path):
    """SIGINT during a long simulation: the core stops at its next check,
    the CLI says so and exits 130, well before the run would have ended."""
    import signal
    import subprocess
    import sys
    import time

    from conftest import sigint_default

    long_run = tmp_path / "long.toml"
    base = (REPO / "examples" / "spine_leaf.toml").read_text()
    long_run.write_text(base.replace("requests = 10000", "requests = 50000000"))
    proc = subprocess.Popen(
        [sys.executable, "-m", "fabricsim", "run", str(long_run)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=sigint_default,
    )
    time.sleep(1.5)
    start = time.monotonic()
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 130, err
    assert "interrupted" in err
    assert time.monotonic() - start < 5


SHARED_LITMUS = REPO / "python" / "fabricsim" / "litmus"


def test_litmus_oracle_json_contract(cli):
    proc = cli("litmus", str(SHARED_LITMUS / "SB.litmus"), str(SHARED_LITMUS / "MP.litmus"), "--model", "tso", "--json")
    assert proc.returncode == 0, proc.stderr
    lines = [json.loads(line) for line in proc.stdout.splitlines()]
    assert [o["test"] for o in lines] == ["SB", "MP"]
    assert lines[0]["verdict"] == "allowed" and lines[1]["verdict"] == "forbidden"
    assert all({"test", "model", "verdict", "allowed"} <= set(o) for o in lines)


def test_litmus_on_a_protocol_reports_observed_outcomes(cli):
    proc = cli("litmus", str(SHARED_LITMUS / "SB.litmus"), "--model", "tso", "--protocol", "mesi", "--json")
    assert proc.returncode == 0, proc.stderr
    o = json.loads(proc.stdout)
    assert o["ok"] is True and o["states"] > 0
    assert set(o["observed"]) <= set(o["allowed"]) and len(o["observed"]) == 4


def test_litmus_catches_a_broken_release(cli):
    mp = str(SHARED_LITMUS / "MP+rel+acq.litmus")
    proc = cli("litmus", mp, "--model", "rc", "--protocol", "msi", "--mutant", "reorder-release")
    assert proc.returncode == 5  # violation found
    assert "forbidden outcome observed" in proc.stdout
    # the shortest interleaving, as check prints a counterexample
    assert "shortest interleaving:\n    forbidden outcome: " in proc.stdout and "before:" in proc.stdout
    # the old spelling is the same run
    old = cli("litmus", mp, "--model", "rc", "--protocol", "msi+reorder-release")
    assert (
        old.returncode == 5 and old.stdout.replace("msi+reorder-release", "msi mutant=reorder-release") == proc.stdout
    )


def test_litmus_writes_a_failure_s_chart_and_takes_the_protocol_s_keys(cli, tmp_path):
    mp = str(SHARED_LITMUS / "MP+rel+acq.litmus")
    chart = tmp_path / "mp.svg"
    proc = cli(
        "litmus",
        mp,
        "--model",
        "rc",
        "--protocol",
        "pcie",
        "--set",
        "variant=unordered",
        "--set",
        "nic=1",
        "--chart",
        str(chart),
    )
    assert proc.returncode == 5, proc.stderr
    assert chart.read_text().startswith("<svg") and f"sequence chart: {chart}" in proc.stdout
    ok = cli("litmus", mp, "--model", "rc", "--protocol", "pcie", "--set", "variant=rc-opt", "--set", "nic=1", "--json")
    assert ok.returncode == 0 and json.loads(ok.stdout)["ok"], ok.stderr
    cfg = tmp_path / "run.toml"
    cfg.write_text('[protocol]\nname = "pcie"\n[protocol.pcie]\nvariant = "rc"\n')
    ok = cli("litmus", mp, "--model", "rc", "--config", str(cfg), "--set", "nic=1", "--json")
    assert ok.returncode == 0 and json.loads(ok.stdout)["ok"], ok.stderr
    bad = cli("litmus", mp, "--model", "rc", "--protocol", "cord", "--set", "epoch_bit=3")
    assert bad.returncode == 2
    assert "--set epoch_bit=3: protocol.cord.epoch_bit: unknown key; did you mean `epoch_bits`?" in bad.stderr
    none = cli("litmus", mp, "--model", "rc", "--protocol", "gcs")
    assert none.returncode == 2 and '"gcs" has no cores for litmus programs: its threads acquire' in none.stderr
    two = cli("litmus", mp, mp, "--model", "rc", "--protocol", "msi", "--chart", str(chart))
    assert two.returncode == 2 and "--chart: applies to one litmus test" in two.stderr


def test_litmus_parse_error_names_file_line_and_column(cli, tmp_path):
    bad = tmp_path / "bad.litmus"
    bad.write_text("C bad\n{ x=0; }\nP0(atomic_int* x) {\n  while (1) { }\n}\nexists (x=0)\n")
    proc = cli("litmus", str(bad), "--model", "sc")
    assert proc.returncode == 2
    assert f"{bad}:4:3: `while` is outside what the models define" in proc.stderr


def test_litmus_directory_with_a_broken_file_reports_every_other_test(cli, tmp_path):
    tests = tmp_path / "tests"
    (tests / "sub").mkdir(parents=True)
    names = ["SB", "MP", "LB+acq+rel", "CoRR"]
    for n in names[:2]:
        (tests / f"{n}.litmus").write_text((SHARED_LITMUS / f"{n}.litmus").read_text())
    for n in names[2:]:
        (tests / "sub" / f"{n}.litmus").write_text((SHARED_LITMUS / f"{n}.litmus").read_text())
    broken = tests / "sub" / "broken.litmus"
    broken.write_text("C broken\n{ x=0; }\nP0(atomic_int* x) {\n  while (1) { }\n}\nexists (x=0)\n")
    (tests / "notes.txt").write_text("not a litmus test")
    missing = tmp_path / "missing.litmus"
    proc = cli("litmus", str(tests), str(missing), "--model", "tso", "--json", "-j", "2")
    assert proc.returncode == 2, proc.stderr
    lines = [json.loads(line) for line in proc.stdout.splitlines()]
    # Every file, sorted within the directory, in order; each line names its file.
    in_dir = [
        tests / "MP.litmus",
        tests / "SB.litmus",
        tests / "sub" / "CoRR.litmus",
        tests / "sub" / "LB+acq+rel.litmus",
    ]
    assert [o["file"] for o in lines] == sorted(str(p) for p in [*in_dir, broken]) + [str(missing)]
    good = [o for o in lines if "error" not in o]
    assert sorted(o["test"] for o in good) == sorted(names)
    assert {o["file"] for o in lines if "error" in o} == {str(broken), str(missing)}
    assert f"{broken}:4:3:" in proc.stderr and str(missing) in proc.stderr
    assert "summary: 6 files, 4 tests run under tso" in proc.stderr
    assert "2 files refused" in proc.stderr and "failures by reason" in proc.stderr
    # The same files give the same bytes.
    again = cli("litmus", str(tests), str(missing), "--model", "tso", "--json", "-j", "2")
    assert again.stdout == proc.stdout


def test_litmus_protocol_failure_in_a_directory_exits_5(cli, tmp_path):
    for n in ["MP", "MP+rel+acq"]:
        (tmp_path / f"{n}.litmus").write_text((SHARED_LITMUS / f"{n}.litmus").read_text())
    proc = cli("litmus", str(tmp_path), "--model", "rc", "--protocol", "msi", "--mutant", "reorder-release")
    assert proc.returncode == 5, proc.stderr
    assert "msi mutant=reorder-release: forbidden outcome observed" in proc.stdout


def test_litmus_seq_cst_store_buffering_under_tso_follows_the_mapping(cli, tmp_path):
    sb = (SHARED_LITMUS / "SB.litmus").read_text()
    assert "memory_order_relaxed" in sb
    f = tmp_path / "SB+sc.litmus"
    f.write_text(sb.replace("memory_order_relaxed", "memory_order_seq_cst"))
    standard = cli("litmus", str(f), "--model", "tso", "--json")
    assert standard.returncode == 0, standard.stderr
    o = json.loads(standard.stdout)
    assert o["verdict"] == "forbidden" and o["mapping"] == "standard"
    plain = cli("litmus", str(f), "--model", "tso", "--mapping", "plain", "--json")
    o = json.loads(plain.stdout)
    assert o["verdict"] == "allowed" and o["mapping"] == "plain"
    # A protocol runs the same compiled program: MESI's TSO cores never show SB.
    proc = cli("litmus", str(f), "--model", "tso", "--protocol", "mesi", "--json")
    o = json.loads(proc.stdout)
    assert proc.returncode == 0 and o["ok"] and o["verdict"] == "forbidden"


def test_check_passes_mesi_and_catches_a_mutant_with_a_chart(cli, tmp_path):
    proc = cli("check", str(REPO / "examples" / "check" / "mesi.toml"), "--json")
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    assert report["ok"] and report["complete"] and report["states"] > 100_000
    chart = tmp_path / "cx.svg"
    proc = cli("check", str(REPO / "examples" / "check" / "mesi_mutant.toml"), "--chart", str(chart))
    assert proc.returncode == 5  # violation found
    assert "single-writer-multiple-readers" in proc.stdout
    assert chart.read_text().startswith("<svg")


def test_check_config_errors_name_the_key(cli, tmp_path):
    bad = tmp_path / "c.toml"
    bad.write_text('[protocol]\nname = "mesi"\n[check]\ncaches = 3\nmutnt = "x"\n')
    proc = cli("check", str(bad))
    assert proc.returncode == 2 and "check.mutnt: unknown key" in proc.stderr


def test_check_on_disk_keeps_a_checkpoint_and_continues_it(cli, tmp_path):
    config = tmp_path / "g.toml"
    config.write_text('[protocol]\nname = "german"\n[check]\ncaches = 3\nvalues = 2\ncheckpoint_minutes = 0\n')
    whole = json.loads(
        cli("check", str(config), "--json", "--set", "check.checkpoint_minutes=0", "--disk", str(tmp_path / "w")).stdout
    )
    assert whole["complete"] and whole["checkpoint_depth"] is None
    proc = cli("check", str(config), "--disk", str(tmp_path / "d"), "--set", "check.max_depth=7")
    assert proc.returncode == 6, proc.stderr  # bounded: not a proof
    assert "checkpoint at depth 7 kept: run the same command again" in proc.stdout
    proc = cli("check", str(config), "--disk", str(tmp_path / "d"), "--json")
    report = json.loads(proc.stdout)
    assert report["resumed_from_depth"] == 7 and report["complete"]
    assert (report["states"], report["transitions"]) == (whole["states"], whole["transitions"]) == (58104, 235872)
    # the same directory for another configuration is refused, naming both
    other = tmp_path / "o.toml"
    other.write_text('[protocol]\nname = "german"\n[check]\ncaches = 2\nvalues = 2\n')
    cli("check", str(config), "--disk", str(tmp_path / "d"), "--set", "check.max_depth=3")
    proc = cli("check", str(other), "--disk", str(tmp_path / "d"))
    assert proc.returncode == 2 and "check.disk" in proc.stderr and "another search" in proc.stderr


def test_check_disk_keys_need_disk(cli, tmp_path):
    config = tmp_path / "g.toml"
    config.write_text('[protocol]\nname = "german"\n[check]\ncaches = 2\nmemory = "1GiB"\n')
    proc = cli("check", str(config))
    assert proc.returncode == 2 and "check.memory: applies only with disk" in proc.stderr
    proc = cli("check", str(config), "--disk", str(tmp_path / "d"), "--set", 'check.memory="1KiB"')
    assert proc.returncode == 2 and "check.memory" in proc.stderr and "expected 1MiB" in proc.stderr


def test_check_symmetry_is_refused_where_there_are_no_scalarsets(cli, tmp_path):
    config = tmp_path / "g.toml"
    config.write_text('[protocol]\nname = "gcs"\n[check]\ncaches = 2\nsymmetry = true\n')
    proc = cli("check", str(config))
    assert proc.returncode == 2 and "check.symmetry: does not apply" in proc.stderr


def test_check_suite_usage_and_entries(cli):
    proc = cli("check")
    assert proc.returncode == 2 and "give a CONFIG or --suite NAME" in proc.stderr
    proc = cli("check", "--suite", "nosuch")
    assert proc.returncode == 2 and "no such suite" in proc.stderr and "features" in proc.stderr
    proc = cli("check", "--suite", "features", "--only", "nosuch")
    assert proc.returncode == 2 and "not in suite" in proc.stderr and "dcoh_invblk" in proc.stderr
    # every entry of the suite is a valid configuration (a search bounded to its first states)
    from fabricsim import check_suite

    entries = check_suite.load("features")
    assert {"msi", "dcoh_invblk", "cord", "gcs_blades", "bi", "pcie_2qp"} <= {e.name for e in entries}
    for e in entries:
        if e.kind == "check":
            report = fabricsim.check(e.path, set=["check.max_states=10"])
            assert report["ok"] and not report["complete"], e.name


def test_check_suite_runs_an_entry_and_compares_counts(cli):
    proc = cli("check", "--suite", "features", "--only", "pcie_2qp")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.startswith("pcie_2qp") and " ok " in proc.stdout


def test_a_bounded_check_is_not_a_pass(cli):
    mesi = str(REPO / "examples" / "check" / "mesi.toml")
    proc = cli("check", mesi, "-q", "--set", "check.max_states=1000")
    assert proc.returncode == 6 and "bounded: not every state visited" in proc.stdout
    assert proc.stderr == ""
    assert cli("check", mesi, "-q").returncode == 0


def test_examples_take_a_folder_and_say_where_they_looked(cli, tmp_path):
    proc = cli("examples", "--dir", str(tmp_path))
    assert proc.returncode == 2 and f"--dir {tmp_path}: no example systems" in proc.stderr
    (tmp_path / "one.toml").write_text((REPO / "examples" / "cxl_expander.toml").read_text())
    proc = cli("examples", "--dir", str(tmp_path), "-q")
    assert proc.returncode == 0, proc.stderr
    assert "== one (" in proc.stdout and "completed" in proc.stdout


def test_protocols_lists_every_family_with_its_keys_and_mutants(cli):
    proc = cli("protocols", "--json")
    assert proc.returncode == 0, proc.stderr
    families = {f["name"]: f for f in json.loads(proc.stdout)}
    assert {"msi", "mesi", "german", "dcoh", "cord", "gcs", "bi", "bi_runtime"} <= set(families)
    # the [protocol.dcoh] keys a check reads, listed from the table run reads
    keys = {p["key"]: p for p in families["dcoh"]["check"]["params"]}
    assert set(keys) == {"snoop_filter", "invblk", "hdm_h"} and keys["invblk"]["doc"]
    assert keys["hdm_h"]["type"] == "string"  # bytes, as a run's
    assert any(m["name"] == "forget-sharer" for m in families["msi"]["mutants"])
    text = cli("protocols", "gcs")
    assert text.returncode == 0 and "no-version-check" in text.stdout
    assert "[protocol.gcs] keys a check reads" in text.stdout and "blade_threads" in text.stdout
    # the run side: what a timed machine takes, or that there is none
    assert families["dcoh"]["run"]["cache"] == "required" and families["bi_runtime"]["run"] is None
    assert families["german"]["run"]["drivers"] == ["random"]
    pcie = cli("protocols", "pcie").stdout
    assert "fabricsim litmus" in pcie and "drivers workload" in pcie, pcie
    assert "litmus: fabricsim litmus FILE --protocol pcie (--set keys: variant, mmio, nic" in pcie, pcie
    assert families["pcie"]["litmus"]["programs"] and not families["gcs"]["litmus"]["programs"]
    assert "litmus: no cores for litmus programs" in text.stdout
    bad = cli("protocols", "moesy")
    assert bad.returncode == 2 and "no such protocol" in bad.stderr


def test_export_murphi_writes_a_model_and_refuses_what_it_cannot_write(cli, tmp_path: Path):
    german = REPO / "examples" / "protocols" / "german.tables"
    out = tmp_path / "german3.m"
    proc = cli("export", "--murphi", str(german), "--caches", "3", "--mutant", "forget-sharer", "-o", str(out))
    assert proc.returncode == 0, proc.stderr
    model = out.read_text()
    assert "client_id : 0..2;" in model and "mutant forget-sharer" in model
    assert 'invariant "CntrlProp"' in model and 'invariant "deadlock"' in model
    # standard output by default; --symmetry: scalarsets
    proc = cli("export", "--murphi", str(german), "--symmetry")
    assert proc.returncode == 0, proc.stderr
    assert "client_id : scalarset(2);" in proc.stdout
    # unbounded channels cannot be a Murphi state: refused naming the file, line and feature
    unbounded = tmp_path / "unbounded.tables"
    unbounded.write_text(german.read_text().replace(" capacity 1", ""))
    proc = cli("export", "--murphi", str(unbounded))
    assert proc.returncode == 2
    assert f"{unbounded}:10:4:" in proc.stderr and "capacity" in proc.stderr
    proc = cli("export", "--murphi", str(tmp_path / "missing.tables"))
    assert proc.returncode == 2 and "missing.tables" in proc.stderr and "cannot read" in proc.stderr
    assert cli("export", "--murphi", str(german), "--caches", "0").returncode == 2
