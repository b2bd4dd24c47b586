"""BI (seed 001): sharing non-cache-coherent memory between coherence domains
with bounded incoherence. So far the machine (domains, caches, global
memory) and its explicit cache operations: Figs 3, 11 and 12; PageRank on
sockets (Fig 13) as a count model over a simulated graph and the machine's
measured costs; the runtime of Figs 7-9 checked exhaustively
(``checking``). ``NOT_REPRODUCED`` lists the rest and why."""

#: Results of the paper's evaluation that fabricsim does not reproduce (yet), and why; the report lists them.
NOT_REPRODUCED = [
    (
        "BI Table 1",
        "the BONSAI tree on 224 cores (BI vs U-RCU): the runtime (Figs 7-9, checked) and the coherent machine "
        "exist, but the runtime does not drive the timed cores yet, and the U-RCU front end, the tree workload "
        "and the delegate (design slices 6-7) are not built.",
    ),
]
