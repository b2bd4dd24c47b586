"""BI Fig 13's count model: one synchronous PowerGraph PageRank iteration on
P sockets, for stock PowerGraph (MPI over coherent memory), BI-on-demand and
BI-periodic, from the counts a random vertex cut leaves on each socket and
the per-operation costs the event-level machine measures.

Why a count model: the paper's run is 1.47 G edges on 224 cores; one
iteration is about 10⁹ loads, hours at the engine's few million events per
second (docs/design/bi.md §3.7). What Fig 13 compares is the price of
keeping replicas consistent (messages vs remote cached loads and batched
invalidation) against the gather's own work, and those are counts times
costs:

- the counts come from simulation: an R-MAT graph with Twitter's average
  degree, PowerGraph's random vertex cut over P sockets, and PageRank to
  convergence (``fabricsim._core.RmatGraph``); they are scaled to Twitter's
  size (edges by E_twitter / E, vertex counts by V_twitter / V);
- the machine's costs come from event-level runs of the BI machine (a load
  from local, same-enclosure and other-enclosure memory; a pipelined
  clflushopt of a line the socket does not hold);
- PowerGraph's software costs are parameters (:class:`Software`), with the
  confidence of their sources; the report re-runs the figure with other
  values (Choices).

Per socket s and iteration (E_s edges on s, R_s mirrors on s, X_s mirrors
elsewhere of s's masters, E_st edges on s whose source is mastered on t,
L(s, t) a load of socket t's memory from s, μ the share of vertex reads that
miss the socket's L3 (LRU, by Che's approximation over the vertices'
read counts), m the misses a core overlaps, C cores):

- gather work, every variant: E_s × (edge + μ × L_v / m) / C, where L_v is
  L(s, s) for stock (the replica is local) and the E_st-weighted L(s, t)
  for BI (a mirror reads its master's data through its reference, §6.3);
- stock: every mirror sends its partial sum to the master and every master
  its new value to each mirror: 2 (R_s + X_s) records, each serialised on
  one side and deserialised on the other (record), plus the receiver's
  coherent transfer of the bytes, 16 B a record, each line a cross-socket
  dirty hit (measured in coherent mode);
- BI: the masters read their mirrors' gather fields: X_s remote loads;
- BI-on-demand: at the two barriers one core per socket clflushopts the
  lines the phase modified that the socket reads (its mirrors' masters'
  data, its masters' mirrors' gather fields: R_s + X_s), then mfence, on the
  critical path;
- BI-periodic: one core per socket runs reader_engine every period; it
  invalidates every writer's modified log (Fig 8), i.e. every BI-managed
  object modified machine-wide (each vertex's data and every replica's
  gather field: V (1 + replication) lines an iteration); the other C − 1
  cores do the gather; an iteration takes the longer of the two. Its
  replicas may read a value one iteration old: a cached remote line is
  stale if its master wrote it less than a period before the read, so a
  remote read is stale with probability (1 − μ) × min(1, period / (2 ×
  gather time)); the PageRank run with that probability gives its
  iteration count.

Not modelled (each below 1 % of an iteration at these sizes): MPI's
per-buffer overhead and polling, the barriers themselves and their mfences,
the refills after an invalidation, edge data (local in every variant).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from functools import lru_cache

#: Twitter-2010 (LAW): the paper's graph ("4.1 million vertices" in its text is a typo for 41.7 M)
TWITTER_V = 41_652_230
TWITTER_E = 1_468_365_182
CORES = 28
L3_BYTES = int(38.5 * (1 << 20))
LINE = 64
#: one record of PowerGraph's exchange: a vertex id and a double
RECORD_BYTES = 16
PERIOD_NS = 1e6
VARIANTS = ("stock", "bi-on-demand", "bi-periodic")


@dataclass(frozen=True)
class Machine:
    """Costs measured on the event-level BI machine (ns)."""

    local: float
    same: float
    cross: float
    flush: float
    #: coherent mode (stock): a load of a line another socket's core modified
    coherent_same: float = 0.0
    coherent_cross: float = 0.0

    def latency(self, s: int, t: int, sockets: int) -> float:
        if s == t:
            return self.local
        per = max(1, sockets // 2)
        return self.same if s // per == t // per else self.cross

    def dirty_hit(self, s: int, t: int, sockets: int) -> float:
        """A load on socket ``s`` of a line socket ``t``'s core just wrote, with coherence on."""
        if s == t:
            return self.local
        per = max(1, sockets // 2)
        return self.coherent_same if s // per == t // per else self.coherent_cross


@dataclass(frozen=True)
class Software:
    """PowerGraph's costs on a core, not the machine's (no public per-operation measurement)."""

    #: gather + scatter work per edge besides the vertex read (≈ 50 cycles; confidence low)
    edge: float = 20.0
    #: a record serialised into an exchange buffer or deserialised with a vertex-id lookup (confidence low)
    record: float = 150.0
    #: cache misses a core overlaps in the gather loop (a property of the program, bounded by the core's
    #: fill buffers, system.FILL_BUFFERS; confidence low)
    mlp: float = 4.0
    #: what BI-periodic's reader_engine invalidates: "all" writers' modified logs (Fig 8) or only the
    #: "relevant" lines the socket reads, as BI-on-demand does
    periodic_flush: str = "all"
    #: a stale read in BI-periodic returns the previous iteration's value (off: always fresh)
    staleness: bool = True


@dataclass(frozen=True)
class Iteration:
    sockets: int
    variant: str
    #: ns of one iteration (the slowest socket)
    ns: float
    gather_ns: float
    exchange_ns: float
    flush_ns: float
    p_stale: float


@lru_cache(maxsize=64)
def _cut(scale: int, seed: int, sockets: int) -> dict:
    return json.loads(graph(scale, seed).cut(sockets, seed=seed))


@lru_cache(maxsize=8)
def _popularity(scale: int, seed: int):
    """Each vertex's share of the gather's reads (its out-degree over the edges), vertices with an edge."""
    import numpy as np

    d = np.asarray(graph(scale, seed).out_degrees(), dtype=float)
    d = d[d > 0]
    return d / d.sum()


def lru_miss_share(p, lines: float) -> float:
    """The miss ratio of an LRU cache of ``lines`` lines under independent references with popularities
    ``p``, by Che's approximation (Che, Tung and Wang, IEEE JSAC 2002): the characteristic time T solves
    Σ (1 − e^(−p T)) = lines, and an item hits with probability 1 − e^(−p T)."""
    import numpy as np

    if lines >= len(p):
        return 0.0
    lo, hi = 0.0, 1.0
    while np.sum(1.0 - np.exp(-p * hi)) < lines:
        hi *= 2.0
    for _ in range(60):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if np.sum(1.0 - np.exp(-p * mid)) < lines else (lo, mid)
    return 1.0 - float(np.sum(p * (1.0 - np.exp(-p * lo))))


def miss_share(
    scale: int, seed: int, cut: dict, l3_lines: float = L3_BYTES / LINE, vertices: float = TWITTER_V
) -> float:
    """μ: the share of the gather's vertex reads that miss the socket's L3 (LRU, a line a vertex), for a
    ``vertices``-vertex graph the R-MAT graph stands for (the L3 holds the same share of its vertices).
    Reads follow the out-degrees wherever the socket count: the vertices read most have a replica on
    every socket. An event-level gather checks this against the machine's caches (tests/test_bi_fig13.py)."""
    return _miss_share(scale, seed, l3_lines * cut["vertices"] / vertices)


@lru_cache(maxsize=64)
def _miss_share(scale: int, seed: int, lines: float) -> float:
    return lru_miss_share(_popularity(scale, seed), lines)


def iteration(cut: dict, mu: float, machine: Machine, sw: Software, variant: str) -> Iteration:
    p = cut["sockets"]
    k_e = TWITTER_E / sum(cut["edges"])
    k_v = TWITTER_V / cut["vertices"]
    worst = None
    for s in range(p):
        edges = cut["edges"][s] * k_e
        mirrors = cut["mirrors"][s] * k_v
        remote_mirrors = sum(cut["pairs"][t][s] for t in range(p)) * k_v
        if variant == "stock":
            lv = machine.local
        else:
            lv = sum(cut["edge_sources"][s][t] * machine.latency(s, t, p) for t in range(p)) / cut["edges"][s]
        gather = edges * (sw.edge + mu * lv / sw.mlp) / CORES
        flush = 0.0
        if variant == "stock":
            records = 2 * (mirrors + remote_mirrors)
            # the receiver copies the sender's freshly written buffer: cross-socket dirty hits
            far = [machine.dirty_hit(s, t, p) for t in range(p) if t != s] or [machine.local]
            transfer = (mirrors + remote_mirrors) * RECORD_BYTES / LINE * (sum(far) / len(far)) / sw.mlp
            exchange = (records * sw.record + transfer) / CORES
            total = gather + exchange
        else:
            exchange = sum(cut["pairs"][t][s] * machine.latency(s, t, p) for t in range(p)) * k_v / sw.mlp / CORES
            if variant == "bi-on-demand":
                flush = (mirrors + remote_mirrors) * machine.flush
                total = gather + exchange + flush
            else:
                lines = TWITTER_V * (1 + cut["replication"]) if sw.periodic_flush == "all" else mirrors + remote_mirrors
                flush = lines * machine.flush
                total = max((gather + exchange) * CORES / (CORES - 1), flush)
        it = Iteration(p, variant, total, gather, exchange, flush, 0.0)
        if worst is None or it.ns > worst.ns:
            worst = it
    if variant == "bi-periodic" and sw.staleness:
        worst = replace(worst, p_stale=(1 - mu) * min(1.0, PERIOD_NS / (2 * worst.gather_ns)))
    return worst


@lru_cache(maxsize=4)
def graph(scale: int, seed: int = 1):
    """The R-MAT graph (kept: every analysis of one report uses the same one)."""
    from ... import _core

    return _core.RmatGraph(scale, seed=seed)


@lru_cache(maxsize=256)
def _pagerank(scale: int, seed: int, sockets: int, p_stale: float) -> int:
    return json.loads(graph(scale, seed).pagerank(sockets, p_stale=p_stale, seed=seed))["iterations"]


def stale_probability(p: float) -> float:
    """p rounded to one significant digit: the PageRank run is the costly part, and the alternatives whose
    probabilities differ by less share it (at the sizes run, p < 0.001 and the iterations do not move)."""
    return float(f"{p:.1g}")


def runtimes(scale: int, sockets: list[int], machine: Machine, sw: Software, seed: int = 1) -> list[dict]:
    """Per socket count and variant: the iteration's parts, the iterations PageRank takes, the run time."""
    rows = []
    for p in sockets:
        cut = _cut(scale, seed, p)
        mu = miss_share(scale, seed, cut)
        for v in VARIANTS:
            it = iteration(cut, mu, machine, sw, v)
            # without stale reads the run is the same on any cut
            iters = _pagerank(scale, seed, max(sockets), 0.0)
            if it.p_stale > 0:
                iters = _pagerank(scale, seed, p, stale_probability(it.p_stale))
            rows.append(
                {
                    "sockets": p,
                    "variant": v,
                    "iteration_ms": it.ns / 1e6,
                    "gather_ms": it.gather_ns / 1e6,
                    "exchange_ms": it.exchange_ns / 1e6,
                    "flush_ms": it.flush_ns / 1e6,
                    "p_stale": it.p_stale,
                    "iterations": iters,
                    "runtime_s": it.ns * iters / 1e9,
                    "miss_share": mu,
                    "replication": cut["replication"],
                }
            )
    return rows
