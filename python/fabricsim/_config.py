"""Turning what a user passes (a path, a dict, TOML text, overrides) into what the core reads.

The Python layer never validates a configuration itself: it only finds the text, names its
source for error messages, and hands both to ``fabricsim._core``.
"""

from __future__ import annotations

import json
import math
import os
import tempfile
from collections.abc import Mapping
from typing import Any, NamedTuple, Union

from ._core import ConfigError

ConfigLike = Union[str, "os.PathLike[str]", Mapping[str, Any]]
OverridesLike = Union[None, str, Mapping[str, Any], "list[str]", "tuple[str, ...]"]


class ConfigSource(NamedTuple):
    text: str
    source: str
    fmt: str  # "toml" or "json"


def _json_default(value: Any) -> Any:
    if isinstance(value, os.PathLike):
        return os.fspath(value)
    # numpy scalars and similar objects that know how to become a plain Python number
    item = getattr(value, "item", None)
    if callable(item):
        return item()
    raise TypeError(f"{type(value).__name__} value {value!r} cannot be part of a configuration")


def _check_values(value: Any, path: str) -> None:
    """Name the key of a value JSON cannot carry to the core (None, NaN, infinity)."""
    if isinstance(value, Mapping):
        for k, v in value.items():
            _check_values(v, f"{path}.{k}" if path else str(k))
    elif isinstance(value, (list, tuple)):
        for i, v in enumerate(value):
            _check_values(v, f"{path}[{i}]")
    elif value is None:
        raise ConfigError(f"<python>: {path}: None is not a configuration value; leave the key out for its default")
    elif isinstance(value, float) and not math.isfinite(value):
        raise ConfigError(f"<python>: {path}: {value}: expected a finite number")
    elif isinstance(value, int) and not isinstance(value, bool) and not -(2**63) <= value < 2**63:
        raise ConfigError(f"<python>: {path}: {value}: out of range; expected an integer from -2^63 to 2^63-1")


def check_writable_dir(path: Any, what: str) -> None:
    """Fail before a run, not after it, if its output directory cannot be written."""
    text = os.fspath(path)
    if isinstance(text, bytes):
        text = os.fsdecode(text)
    if not text.strip():
        raise ConfigError(f"{what} {text!r}: expected a directory path (use '.' for the current directory)")
    if os.path.exists(text) and not os.path.isdir(text):
        raise ConfigError(f"{what} {text!r}: exists and is not a directory")
    try:
        os.makedirs(text, exist_ok=True)
        with tempfile.TemporaryFile(dir=text):
            pass
    except OSError as exc:
        raise ConfigError(f"{what} {text!r}: cannot write there: {exc.strerror or exc}") from None


def check_writable_file(path: Any, what: str) -> None:
    """Fail before a run if the file it will write cannot be written (nothing is created)."""
    text = os.fspath(path)
    if isinstance(text, bytes):
        text = os.fsdecode(text)
    if not text.strip():
        raise ConfigError(f"{what} {text!r}: expected a file path")
    if os.path.isdir(text):
        raise ConfigError(f"{what} {text!r}: is a directory, expected a file")
    parent = os.path.dirname(text) or "."
    try:
        with tempfile.TemporaryFile(dir=parent):
            pass
    except OSError as exc:
        raise ConfigError(f"{what} {text!r}: cannot write there: {exc.strerror or exc}") from None


def load_config(config: ConfigLike) -> ConfigSource:
    """Find the configuration text, its format and the name used in error messages.

    - a mapping is serialised as JSON (source ``<python>``);
    - a ``str`` containing a newline is TOML text (source ``<string>``);
    - any other ``str`` or ``os.PathLike`` is the path of a TOML file (source: the path as given).
    """
    if isinstance(config, Mapping):
        _check_values(config, "")
        try:
            text = json.dumps(config, sort_keys=False, default=_json_default)
        except (TypeError, ValueError) as exc:
            raise ConfigError(f"<python>: {exc}") from None
        return ConfigSource(text, "<python>", "json")
    if isinstance(config, str) and "\n" in config:
        return ConfigSource(config, "<string>", "toml")
    if isinstance(config, (str, os.PathLike)):
        path = os.fspath(config)
        if isinstance(path, bytes):
            path = os.fsdecode(path)
        try:
            with open(path, encoding="utf-8") as f:
                text = f.read()
        except FileNotFoundError:
            raise ConfigError(f"{path}: no such configuration file") from None
        except IsADirectoryError:
            raise ConfigError(f"{path}: is a directory, expected a .toml file") from None
        except UnicodeDecodeError as exc:
            raise ConfigError(f"{path}: not UTF-8 text ({exc.reason})") from None
        except OSError as exc:
            raise ConfigError(f"{path}: cannot read: {exc.strerror or exc}") from None
        return ConfigSource(text, path, "toml")
    raise TypeError(f"config must be a path to a .toml file, TOML text or a dict, not {type(config).__name__}")


def _toml_value(value: Any, top: bool) -> str:
    """The override value as the core reads it (a TOML value, or a bare string at top level)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        # At top level a bare string is kept as is: the core parses it as a TOML value and
        # falls back to the plain string, so "64GB/s" and "uniform" work without quotes.
        return value if top else json.dumps(value)
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        return repr(value)
    if isinstance(value, os.PathLike):
        return _toml_value(os.fspath(value), top)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_toml_value(v, False) for v in value) + "]"
    if isinstance(value, Mapping):
        items = ", ".join(f"{json.dumps(str(k))} = {_toml_value(v, False)}" for k, v in value.items())
        return "{" + items + "}"
    item = getattr(value, "item", None)  # numpy scalars
    if callable(item):
        return _toml_value(item(), top)
    raise TypeError(f"override value {value!r} of type {type(value).__name__} is not supported")


def overrides_list(overrides: OverridesLike) -> list[str]:
    """Normalise ``set=`` into the core's list of ``"key=value"`` strings."""
    if overrides is None:
        return []
    if isinstance(overrides, str):
        overrides = [overrides]
    if isinstance(overrides, Mapping):
        return [f"{key}={_toml_value(value, True)}" for key, value in overrides.items()]
    result = []
    for item in overrides:
        if not isinstance(item, str):
            raise TypeError(f"override {item!r} must be a 'key=value' string")
        if "=" not in item:
            raise ConfigError(f"override {item!r}: expected KEY=VALUE, e.g. workload.requests=1000")
        result.append(item)
    return result
