"""BI (seed 001): sharing non-cache-coherent memory between coherence domains
with bounded incoherence. So far the machine (domains, caches, global
memory) and its explicit cache operations: Figs 3, 11 and 12; PageRank on
sockets (Fig 13) as a count model over a simulated graph and the machine's
measured costs (``NOT_REPRODUCED`` lists the rest and why)."""

#: Results of the paper's evaluation that fabricsim does not reproduce (yet), and why; the report lists them.
NOT_REPRODUCED = [
    (
        "BI Table 1",
        "the BONSAI tree on 224 cores (BI vs U-RCU): needs the BI runtime (Figs 7-9), the coherent-mode "
        "baseline and the tree workload (design slices 3, 6, 7), not built yet.",
    ),
    (
        "BI checker rows",
        "BI's own invariants (no use of a reclaimed object, bounded staleness) need the runtime as a state "
        "machine (design slice 4); the machine's intra-domain single-writer invariant is checked "
        '(fabricsim check with protocol = "bi").',
    ),
]
