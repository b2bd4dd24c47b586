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
