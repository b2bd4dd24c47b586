"""BI (seed 001): sharing non-cache-coherent memory between coherence domains
with bounded incoherence. So far the machine (domains, caches, global
memory) and its explicit cache operations: Figs 3, 11 and 12; PageRank on
sockets (Fig 13) as a count model over a simulated graph and the machine's
measured costs; the runtime of Figs 7-9 checked exhaustively
(``checking``); Table 1's BONSAI tree on the runtime (``table1``; its
U-RCU side once ``table1.URCU`` is on). ``NOT_REPRODUCED`` lists the rest and
why."""

from .table1 import URCU as _URCU

#: Results of the paper's evaluation that fabricsim does not reproduce (yet), and why; the report lists them.
NOT_REPRODUCED = (
    []
    if _URCU
    else [
        (
            "BI Table 1: U-RCU's values (Table 1B's U-RCU write latencies, Table 1C's U-RCU read latencies and the "
            "BI-vs-U-RCU comparisons)",
            "the U-RCU rows are switched off (bi/table1.URCU).",
        ),
    ]
)
