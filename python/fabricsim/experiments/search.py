"""The runner of a checker report's points: one exhaustive search of a
``[check]`` configuration, with the point's ``check.*`` keys applied."""

from __future__ import annotations

import json
from typing import Any

from ..sweeps import Point


def check(point: Point) -> dict[str, Any]:
    """One search (a sweep ``runner``)."""
    import fabricsim

    spec = json.loads(point.text)
    spec["check"].update({k.removeprefix("check."): v for k, v in point.params.items()})
    r = fabricsim.check(spec)
    v = r.get("violation") or {}
    return {
        "ok": bool(r["ok"]),
        "complete": bool(r["complete"]),
        "violation": v.get("kind", ""),
        "states": int(r["states"]),
        "seconds": float(r["seconds"]),
    }
