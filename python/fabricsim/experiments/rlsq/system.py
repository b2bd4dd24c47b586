"""The RLSQ paper's DMA system (Table 2) as a configuration dict, the same
system as ``examples/rlsq_table2.toml`` (a test checks that they agree).

One NIC queue pair on a 200 ns, 16 GB/s I/O bus to the I/O hub; the root
complex (17 ns) and the host memory behind it, 1 ns from the hub. Choices
the paper does not make:

- the I/O bus is 128 bits at 1 GHz (16 GB/s); a completion carries a
  64 B line and a 16 B header;
- the host is one memory (DDR3-1600's tRCD + CL = 27.5 ns plus the
  controller: 50 ns) rather than Table 2's caches and eight channels;
- the root complex's 17 ns is its handler time, which the memory's
  handler pays too (one ``directory_latency``);
- the NIC issues a read every 3 ns (Table 2's DMA request issue).
"""

from __future__ import annotations


def table2(variant: str = "rc-opt") -> dict:
    """The Table 2 system running ordered DMA reads of one line."""
    return {
        "name": "rlsq_table2",
        "description": "RLSQ Table 2: a NIC reads host memory through a root complex with an RLSQ",
        "sim": {"seed": 1},
        "requester": [{"name": "nic"}],
        "switch": [{"name": "io", "latency": "0ns"}],
        "memory": [{"name": "rc"}, {"name": "mem"}],
        "link": [
            {"a": "nic", "b": "io", "latency": "200ns", "bandwidth": "16GB/s", "port_delay": "0ns"},
            {"a": "rc", "b": "io", "latency": "1ns", "bandwidth": "64GB/s", "port_delay": "0ns"},
            {"a": "mem", "b": "io", "latency": "1ns", "bandwidth": "64GB/s", "port_delay": "0ns"},
        ],
        "workload": {
            "pattern": "dma_reads",
            "dma_size": "64B",
            "ordered": True,
            "footprint": "64MiB",
            "line": "64B",
            "requests": 2000,
        },
        "protocol": {
            "name": "pcie",
            "directory_latency": "17ns",
            "memory_latency": "50ns",
            "cache_latency": "3ns",
            "issue_interval": "3ns",
            "control_bytes": "16B",
            "data_bytes": "80B",
            "pcie": {"variant": variant, "rlsq_entries": 256, "window": 256},
        },
    }
