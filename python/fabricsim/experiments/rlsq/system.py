"""The RLSQ paper's DMA system (Table 2) as a configuration dict, the same
system as ``examples/rlsq_table2.toml`` (a test checks that they agree).

The NIC's queue pairs share one 200 ns, 16 GB/s I/O bus to the I/O hub;
the root complex (17 ns on a request from the bus) and the host behind it
sit 1 ns from the hub. Choices the paper does not make:

- the I/O bus is 128 bits at 1 GHz (16 GB/s); a completion carries a
  64 B line and a 16 B header;
- the host is a MESI domain (host cores' private caches, none in these
  runs, and one blocking directory) whose home holds Table 2's L2 (256 KiB,
  8 ways, 20 cycles at 3 GHz: 7 ns) in front of DDR3-1600; a read that
  misses the L2 costs 75 ns more (tRP + tRCD + CL = 41 ns, the controller's
  front and back end, 20 ns, and the L2's response); reads are served in
  any order and a hit overtakes a miss. The root complex reads coherently
  (GetS, a sharer until invalidated, its reads do not allocate in the L2)
  and has one request per line out at a time;
- the root complex pays its 17 ns once per request, on arrival from the
  bus; its answers from the host and its completions cost nothing more;
- each queue pair issues a read every 3 ns (Table 2's DMA request issue).
"""

from __future__ import annotations

#: Table 2's L2: the KVS table the host wrote sits in it.
L2 = "256KiB"


def table2(variant: str = "rc-opt", qps: int = 1) -> dict:
    """The Table 2 system running ordered DMA reads of one line from ``qps`` queue pairs."""
    return {
        "name": "rlsq_table2",
        "description": "RLSQ Table 2: a NIC reads host memory through a root complex with an RLSQ",
        "sim": {"seed": 1},
        "requester": [{"name": f"qp{i}"} for i in range(qps)],
        "switch": [{"name": "nic", "latency": "0ns"}, {"name": "io", "latency": "0ns"}],
        "memory": [{"name": "rc"}, {"name": "mem"}],
        "link": [
            {"a": "nic", "b": "io", "latency": "200ns", "bandwidth": "16GB/s", "port_delay": "0ns"},
            {"a": "rc", "b": "io", "latency": "1ns", "bandwidth": "64GB/s", "port_delay": "0ns"},
            {"a": "mem", "b": "io", "latency": "1ns", "bandwidth": "64GB/s", "port_delay": "0ns"},
        ]
        + [
            {"a": f"qp{i}", "b": "nic", "latency": "0ns", "bandwidth": "1TB/s", "port_delay": "0ns"} for i in range(qps)
        ],
        "workload": {
            "pattern": "dma_reads",
            "dma_reads": {"dma_size": "64B", "ordered": True},
            "footprint": "64MiB",
            "line": "64B",
            "requests": 2000,
        },
        "protocol": {
            "name": "pcie",
            "memory_latency": "75ns",
            "cache_latency": "3ns",
            "issue_interval": "3ns",
            "control_bytes": "16B",
            "data_bytes": "80B",
            "pcie": {
                "variant": variant,
                "rlsq_entries": 256,
                "window": 256,
                "rc_latency": "17ns",
                "host_latency": "7ns",
            },
        },
    }


def kvs(variant: str, get: str, object_bytes: int, qps: int = 1, batch: int = 100, gets: int = 1000) -> dict:
    """Table 2 running key-value GETs: each queue pair ``gets`` GETs of
    ``object_bytes`` in batches of ``batch`` with 1 µs between, from a
    table that fills the host's L2 (the host wrote it before the run)."""
    b = table2(variant, qps)
    b["workload"] = {
        "pattern": "kvs_gets",
        "kvs_gets": {"get": get, "object_size": f"{object_bytes}B", "batch": batch, "batch_gap": "1us"},
        "footprint": L2,
        "line": "64B",
        "requests": gets * reads_per_get(get, object_bytes),
    }
    b["protocol"]["pcie"]["host_cached"] = L2
    return b


def reads_per_get(get: str, object_bytes: int, line: int = 64) -> int:
    """Operations of one GET: its line reads and Pessimistic's two
    fetch-and-adds (``workloads/kvs_gets.rs``; a test checks they agree)."""
    if get == "validation":
        return -(-(object_bytes + 8) // line) + 1
    if get == "single_read":
        return -(-(object_bytes + 16) // line)
    if get == "farm":
        return -(-object_bytes // (line - 8))
    if get == "pessimistic":
        return -(-(object_bytes + 8) // line) + 2
    raise ValueError(f"{get!r}: expected 'validation', 'single_read', 'farm' or 'pessimistic'")


def table3(mmio: str = "rob") -> dict:
    """The MMIO system (Table 3, ``examples/rlsq_mmio.toml``): one host core
    writes messages to the NIC through the root complex (60 ns) and a
    200 ns I/O bus; ``mmio`` orders them: ``fence`` (an sfence per
    message), ``rob`` (sequence numbers and a ROB of 16 entries per virtual
    network: relaxed stores, releases), ``rob-nic`` (that ROB at the NIC),
    ``unordered``.

    The core is the ``gem5-o3-3ghz`` preset (Table 3's O3CPU at 3 GHz,
    gem5's O3 defaults; docs/cpu-presets.md): it dispatches up to 8
    operations a cycle, with no in-order issue stage.

    Choices the paper does not make: every operation is a 64 B
    write-combining line (before the preset, a stand-in wrote one every
    1 ns); the I/O bus is 16 GB/s and a posted
    write carries a 16 B header; the core's answers from the root complex
    leave it 60 ns after the write arrived (an sfence waits that long); the
    NIC's 10 ns is pipelined."""
    link = {"bandwidth": "64GB/s", "port_delay": "0ns"}
    return {
        "name": "rlsq_mmio",
        "description": "RLSQ Table 3: a core writes MMIO messages to a NIC, fenced or through the root complex's ROB",
        "sim": {"seed": 1},
        "requester": [{"name": "cpu"}],
        "switch": [{"name": "io", "latency": "0ns"}],
        "memory": [{"name": "rc"}, {"name": "mem"}, {"name": "nic"}],
        "link": [
            {"a": "cpu", "b": "io", "latency": "1ns", **link},
            {"a": "rc", "b": "io", "latency": "1ns", **link},
            {"a": "mem", "b": "io", "latency": "1ns", **link},
            {"a": "nic", "b": "io", "latency": "200ns", "bandwidth": "16GB/s", "port_delay": "0ns"},
        ],
        "workload": {
            "pattern": "mmio_writes",
            "mmio_writes": {"message_size": "64B"},
            "footprint": "1MiB",
            "line": "64B",
            "requests": 4000,
        },
        "protocol": {
            "name": "pcie",
            "directory_latency": "10ns",
            "cache_latency": "1ns",
            "core": {"preset": "gem5-o3-3ghz"},
            "control_bytes": "16B",
            "data_bytes": "80B",
            "pcie": {"mmio": mmio, "rob_entries": 16, "rc_latency": "60ns"},
        },
    }


def p2p(queues: str | None, object_bytes: int, gets: int = 300) -> dict:
    """Table 2 with peer-to-peer (§6.6): thread A (queue pair 0) runs Single
    Read GETs from the host in batches of 100 with 1 µs between (RC-opt);
    with ``queues`` (``"shared"``: one 32-entry switch queue, ``"voq"``: a
    queue per destination), thread B (queue pair 1) reads objects of the
    same size from a P2P device (one read at a time, 100 ns each) through
    the same switch without pause, and ``gets`` times as many as A so that
    it keeps the device busy until A is done. None: A alone (the baseline).

    Choices the paper does not make: the switch sits at the root complex's
    end of the I/O bus and forwards in no time; a refused read returns to
    its queue pair, which sends it again at once (both threads retry, so
    they alternate as the paper's round-robin); each VOQ has the shared
    queue's 32 entries."""
    b = kvs("rc-opt", "single_read", object_bytes, qps=1 if queues is None else 2, batch=100, gets=gets)
    if queues is None:
        return b
    b["memory"] += [{"name": "switch"}, {"name": "p2p"}]
    b["link"] += [
        {"a": "switch", "b": "io", "latency": "0ns", "bandwidth": "1TB/s", "port_delay": "0ns"},
        {"a": "p2p", "b": "io", "latency": "1ns", "bandwidth": "64GB/s", "port_delay": "0ns"},
    ]
    b["requester"][1]["workload"] = {"kvs_gets": {"batch_gap": "0ns"}, "requests": 10 * b["workload"]["requests"]}
    b["protocol"]["pcie"].update({"p2p": queues, "switch_entries": 32, "p2p_latency": "100ns"})
    return b


def emulation(get: str, object_bytes: int, quick: bool) -> dict:
    """§6.4's GET setting as the paper simulates it (Figs 7 and 8): 16 QPs,
    batches of 32, each QP's READs serial as a real NIC issues them, on
    RC-opt; 320 GETs a QP (quick: 128)."""
    b = kvs("rc-opt", get, object_bytes, qps=16, batch=32, gets=128 if quick else 320)
    b["workload"]["kvs_gets"]["serial_reads"] = True
    return b
