"""Exact mean value analysis of a closed network of one delay station and
one FCFS queue (Reiser and Lavenberg, JACM 1980): BI Table 1's threads, each
doing reads (the delay) between updates it delegates to one core (the
queue).

The paper's Table 1 runs 224 threads; the event-level machine measures the
per-operation costs on a few cores (docs/design/bi.md §3.7) and this model
composes them for 224. Its recursion is exact for exponential service at
the queue; BI's delegate serves updates of nearly constant length, for
which it is an approximation that errs towards more queueing (stated in
the experiment)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Closed:
    """Population ``n``; ``think`` ns at the delay station per cycle; ``service`` ns at the queue."""

    n: int
    think: float
    service: float

    def __post_init__(self) -> None:
        if self.n < 1:
            raise ValueError(f"population {self.n}: expected at least 1")
        if not (self.think >= 0 and self.service > 0):
            raise ValueError(f"think {self.think} ns, service {self.service} ns: expected ≥ 0 and > 0")


@dataclass(frozen=True)
class Solution:
    #: cycles per ns (one update each)
    throughput: float
    #: ns a customer spends at the queue (waiting and served)
    response: float
    #: customers at the queue on average
    queue: float
    utilization: float


def solve(c: Closed) -> Solution:
    q = 0.0
    x = r = 0.0
    for k in range(1, c.n + 1):
        r = c.service * (1.0 + q)
        x = k / (c.think + r)
        q = x * r
    return Solution(throughput=x, response=r, queue=q, utilization=x * c.service)
