"""RLSQ (seed 003, "Fast Remote Memory Ordering"): PCIe reads ordered at the
root complex instead of at the NIC. Reproduced: Fig 2's DMA reads of an
RDMA WRITE (one, two unordered, two ordered) in simulation, the ordered DMA reads of
Fig 5, the key-value GETs of Figs 6 and 8 (and Fig 7's four GET protocols
in simulation), P2P with and without VOQs of Fig 9, the MMIO writes of
Fig 10, and the checker's MP over DMA, Single Read, Validation, DMA writes
and MMIO (``NOT_REPRODUCED`` lists the rest)."""

#: Results of the paper's evaluation that fabricsim does not reproduce (yet), and why; the report lists them.
NOT_REPRODUCED = [
    (
        "RLSQ Fig 2, the end-to-end RDMA WRITE latencies (All MMIO's median 2,941 ns and the CDFs)",
        "the network, the remote NIC and BlueFlame's MMIO path of the ConnectX-6 Dx are not modelled; only the "
        "client NIC's DMA reads are (RLSQ Fig 2 (simulated): one, two unordered and two ordered DMA reads).",
    ),
    (
        "RLSQ Fig 3, pipelined 64 B RDMA READs (≈ 5.0 Mop/s, one every 200 ns) and WRITEs (3× more)",
        "the ConnectX-6 Dx's processing of one QP's READs (one every 200 ns, which the paper relates to its DMA "
        "latency without saying how) and of its WRITEs are the hardware RDMA engine's, which fabricsim does not "
        "model; ordered reads stopped at the NIC are Fig 5's and Fig 6's NIC rows.",
    ),
    (
        "RLSQ Fig 4, MMIO write-combining stores to a ConnectX-6 Dx (122 Gb/s unfenced; UC stores worse still)",
        "measured on hardware; Fig 10 repeats it in simulation and compares with its −89.5 % at 512 B. The 122 "
        "Gb/s of the hardware's PCIe 4.0 x16 exceeds Table 3's simulated 128-bit bus, and uncached stores are not "
        "modelled (the core is a stand-in: its sfence does not drain write-combining buffers either).",
    ),
    (
        "RLSQ Fig 7 on hardware (ConnectX-6 Dx, 16 client threads)",
        "the hardware's GET throughputs; fabricsim runs Fig 7's four GET protocols in simulation in Fig 8's "
        "setting (RLSQ Fig 7 (simulated)) and compares with the hardware's stated numbers where it models the "
        "same quantity (1.6× over FaRM, Validation's 60 Gb/s at 512 B, Single Read's double).",
    ),
    (
        "RLSQ thread-specific ordering and the speculative Write→Release (§5.1) as timed results",
        "the paper evaluates neither in its figures; fabricsim checks the thread-specific RLSQ (the ``thread`` "
        "variant) in the checker's MP and GET searches and has no speculative release.",
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
