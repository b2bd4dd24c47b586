"""BI (seed 001): sharing non-cache-coherent memory between coherence domains
with bounded incoherence. So far the machine (domains, caches, global
memory) and its explicit cache operations: Figs 3 and 11; the runtime of
Figs 7-9 checked exhaustively (``checking``). ``NOT_REPRODUCED`` lists the
rest and why."""

#: Results of the paper's evaluation that fabricsim does not reproduce (yet), and why; the report lists them.
NOT_REPRODUCED = [
    (
        "BI Fig 12",
        "load throughput under periodic invalidation: needs the flusher core and the aggregate loss model "
        "(docs/design/bi.md slice 5), not built yet.",
    ),
    (
        "BI Table 1",
        "the BONSAI tree on 224 cores (BI vs U-RCU): needs the BI runtime (Figs 7-9), the coherent-mode "
        "baseline and the tree workload (design slices 3, 6, 7), not built yet.",
    ),
    (
        "BI Fig 13",
        "PageRank vs sockets: needs the graph workload, the vertex cut and the count model (design slice 8), "
        "not built yet.",
    ),
]
