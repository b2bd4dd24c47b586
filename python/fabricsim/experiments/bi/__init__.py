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
NOT_REPRODUCED = [
    (
        "BI Figs 3, 11, 12 and 13: the plotted values (each curve's points, Fig 13's socket counts other than 2 and 8)",
        "the paper's plots are images with no values in its text; only the numbers and orderings its prose states "
        "are compared (the rows), and the simulated curves are drawn.",
    ),
    (
        "BI Fig 11: 'With a large working set, the memory latency dominates the cache overhead ... these cache "
        "operations make a negligible difference over the memory latency'",
        "the paper shows no data past 256 KB for it (it says so) and states no number; Fig 3A's flush+read row "
        "covers a flush followed by a load at memory speed, not clwb/clflushopt over working sets past the caches.",
    ),
    (
        "BI Fig 11: 'With a small working set, the cost of both instructions are observable but not prohibitive'",
        "no number and no reference point for 'prohibitive' (against what cost); the per-line costs are in the "
        "figure's data and the other Fig 11 rows.",
    ),
] + (
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
