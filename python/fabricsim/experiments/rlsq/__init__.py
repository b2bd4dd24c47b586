"""RLSQ (seed 003, "Fast Remote Memory Ordering"): PCIe reads ordered at the
root complex instead of at the NIC. Reproduced: the ordered DMA reads of
Fig 5, the key-value GETs of Figs 6 and 8 (and Fig 7's four GET protocols
in simulation), P2P with and without VOQs of Fig 9, the MMIO writes of
Fig 10, and the checker's MP over DMA, Single Read, Validation, DMA writes
and MMIO (``NOT_REPRODUCED`` lists the rest)."""

#: Results of the paper's evaluation that fabricsim does not reproduce (yet), and why; the report lists them.
NOT_REPRODUCED = [
    (
        "RLSQ Figs 2, 3, 4 and 7",
        "measured on ConnectX-6 Dx hardware (Table 4); the paper's simulated counterparts are Figs 5, 6, 8 and 10, "
        "and fabricsim runs Fig 7's four GET protocols in simulation (RLSQ Fig 7 (simulated), the hardware's "
        "quoted claims as its reference); Figs 2 (write latency CDFs), 3 (RDMA READ and WRITE rates) and 4 (MMIO "
        "on the NIC) have no simulated counterpart beyond Fig 10's quoted Fig 4 values.",
    ),
    (
        "RLSQ Tables 5 and 6",
        "area and power from CACTI: a circuit model fabricsim does not have.",
    ),
    (
        "RLSQ Table 2, host caches",
        "the root complex reads one host agent (an L2 hit of 7 ns, a miss 75 ns more) instead of MESI caches "
        "and DDR3-1600 behind a directory; the squash is modelled against that agent's writers.",
    ),
]
