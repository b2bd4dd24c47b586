"""Synthetic stand-ins for application memory traces, in fabricsim's trace format.

ESF (Sec. V-E) replays traces of five applications (BTree, liblinear, redis,
silo, XSBench), one million accesses each, collected with the tool of Yang
et al. (ATC'23). They are not public, and the paper gives neither their
read/write mix nor their locality. The stand-ins here are generated from a
few stated parameters per application, chosen from what each application
does (not fitted to any figure):

- ``footprint``: bytes the accesses spread over;
- ``read_fraction``: reads among accesses (the *mix degree* is
  ``min(read_fraction, 1 - read_fraction)``, ESF Fig 20's x axis);
- ``sequential``: probability that an access continues a sequential run
  (the next 64 B line after the previous access);
- ``hot_fraction`` / ``hot_probability``: a hot region of this fraction of
  the footprint receives this fraction of the other accesses;
- ``phases``: optional read fractions that the trace cycles through, a
  phase every ``phase_length`` accesses (silo's mix changes over time,
  which ESF Fig 20b plots per 1000-access window).

Every access is one 64 B line and may issue at time 0: the replay is then
limited by the requester's window and the fabric, as a memory-bound
replay of a trace without its compute gaps is.

``write_trace(app, requesters, accesses, path, seed)`` writes one file with
every requester's records (each requester its own stream from the seed).
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

LINE = 64


@dataclass(frozen=True)
class StandIn:
    name: str
    #: what the application does, and why these parameters
    why: str
    footprint: int
    read_fraction: float
    sequential: float
    hot_fraction: float
    hot_probability: float
    phases: tuple[float, ...] = field(default_factory=tuple)
    phase_length: int = 1000

    @property
    def mix_degree(self) -> float:
        """ESF's mix degree, min(read ratio, write ratio), of the whole trace."""
        reads = float(np.mean(self.phases)) if self.phases else self.read_fraction
        return min(reads, 1 - reads)


GiB = 1 << 30
MiB = 1 << 20

APPS: dict[str, StandIn] = {
    a.name: a
    for a in (
        StandIn(
            "BTree",
            "index lookups: pointer chasing from a hot upper tree into random leaves; mostly reads",
            footprint=4 * GiB,
            read_fraction=0.92,
            sequential=0.1,
            hot_fraction=0.01,
            hot_probability=0.5,
        ),
        StandIn(
            "liblinear",
            "linear classifier training: streams over the sparse training data, reads and updates a weight vector",
            footprint=2 * GiB,
            read_fraction=0.82,
            sequential=0.7,
            hot_fraction=0.05,
            hot_probability=0.6,
        ),
        StandIn(
            "redis",
            "key-value store under YCSB: skewed key popularity, values read and written in place",
            footprint=1 * GiB,
            read_fraction=0.7,
            sequential=0.3,
            hot_fraction=0.1,
            hot_probability=0.8,
        ),
        StandIn(
            "silo",
            "in-memory OLTP: transactions that read then write records and logs; the mix shifts between "
            "read-mostly and write-heavy phases",
            footprint=2 * GiB,
            read_fraction=0.62,
            sequential=0.4,
            hot_fraction=0.1,
            hot_probability=0.7,
            phases=(0.95, 0.85, 0.75, 0.65, 0.55, 0.45, 0.5, 0.6, 0.7, 0.8),
            phase_length=1000,
        ),
        StandIn(
            "XSBench",
            "Monte Carlo cross-section lookups: random reads in large read-only tables",
            footprint=4 * GiB,
            read_fraction=0.98,
            sequential=0.05,
            hot_fraction=0.02,
            hot_probability=0.3,
        ),
    )
}


def records(app: StandIn, accesses: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """(is_write, line address) of ``accesses`` accesses of one requester."""
    rng = np.random.default_rng(seed)
    lines = app.footprint // LINE
    hot_lines = max(1, int(lines * app.hot_fraction))
    jump = rng.random(accesses) >= app.sequential
    hot = rng.random(accesses) < app.hot_probability
    target = np.where(hot, rng.integers(0, hot_lines, accesses), rng.integers(0, lines, accesses))
    # A sequential access is the line after the previous one: its run's start plus its place in the run.
    jump[0] = True
    run_start = np.maximum.accumulate(np.where(jump, np.arange(accesses), 0))
    addr = (target[run_start] + (np.arange(accesses) - run_start)) % lines
    if app.phases:
        phase = (np.arange(accesses) // app.phase_length) % len(app.phases)
        reads = np.asarray(app.phases)[phase]
    else:
        reads = np.full(accesses, app.read_fraction)
    is_write = rng.random(accesses) >= reads
    return is_write, addr * LINE


def write_trace(
    app: str | StandIn, requesters: list[str], accesses: int, path: str | os.PathLike, seed: int = 1
) -> Path:
    """Write the stand-in ``app`` (a name in APPS, or a StandIn) for each named requester (``accesses``
    each), time 0 throughout."""
    a = APPS[app] if isinstance(app, str) else app
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(path.suffix + ".tmp")
    with open(tmp, "w") as f:
        f.write(f"# fabricsim stand-in for {a.name}: {json.dumps(asdict(a))}\n")
        for i, name in enumerate(requesters):
            is_write, addr = records(a, accesses, seed * 1000 + i)
            ops = np.where(is_write, "W", "R")
            f.writelines(f"0 {name} {op} {ad} {LINE}\n" for op, ad in zip(ops, addr.tolist()))
    os.replace(tmp, path)  # a reader never sees half a file
    return path


def cached_trace(app: str | StandIn, requesters: list[str], accesses: int, seed: int = 1) -> Path:
    """The stand-in's file in fabricsim's cache (``FABRICSIM_CACHE``, else ``~/.cache/fabricsim``), written
    once; its name carries a digest of everything that makes its content."""
    a = APPS[app] if isinstance(app, str) else app
    key = json.dumps([asdict(a), requesters, accesses, seed, 1], sort_keys=True)
    digest = hashlib.sha256(key.encode()).hexdigest()[:16]
    root = Path(os.environ.get("FABRICSIM_CACHE", Path.home() / ".cache" / "fabricsim"))
    path = root / "traces" / f"{a.name}-{digest}.trace"
    if not path.exists():
        write_trace(app, requesters, accesses, path, seed)
    return path
