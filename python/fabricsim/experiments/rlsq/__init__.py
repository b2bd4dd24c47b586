"""RLSQ (seed 003, "Fast Remote Memory Ordering"): PCIe reads ordered at the
root complex instead of at the NIC. This first slice reproduces the
ordered DMA reads of Fig 5 and checks MP over DMA; the KVS, P2P and MMIO
figures come with the later slices (``NOT_REPRODUCED``)."""

#: Results of the paper's evaluation that fabricsim does not reproduce (yet), and why; the report lists them.
NOT_REPRODUCED = [
    (
        "RLSQ Figs 6, 8, 9 and 10",
        "RDMA key-value GETs (Validation, Single Read, FaRM, Pessimistic), P2P through a switch with and without "
        "virtual output queues, and MMIO with fences or sequence numbers and a reorder buffer: the pcie protocol "
        "of this version has DMA reads only.",
    ),
    (
        "RLSQ Figs 2, 3, 4 and 7",
        "measured on ConnectX-6 Dx hardware (Table 4); the paper's simulated counterparts are Figs 5, 6, 8 and 10.",
    ),
    (
        "RLSQ Tables 5 and 6",
        "area and power from CACTI: a circuit model fabricsim does not have.",
    ),
    (
        "RLSQ Table 2, host caches",
        "the root complex reads one host memory (50 ns) instead of MESI caches and DDR3-1600 behind a "
        "directory; the squash is modelled against that memory's writers.",
    ),
]
