"""The BI paper's machine (§7): an HPE Superdome Flex of two enclosures of
four sockets, each socket a coherence domain of 28 Xeon Platinum 8180 cores
(2.5 GHz; "a 32KB L1cache, 1MB L2 cache, and 38.5MB L3 cache"), with
coherence switched off between sockets, sharing a global memory over the
NUMALink fabric. As a configuration dict; one parameter set serves every
figure.

The paper gives no latency. Calibrated (docs/design/bi.md §4, each a
parameter of [protocol.bi] or of a link here):

- the core's L1 and L2 hits: the `skylake-sp` preset's (4 and 14 cycles,
  docs/cpu-presets.md);
- L3 22 ns, local DRAM 90 ns (AnandTech's Skylake-SP memory-latency table:
  16-32 MB "25-27 ns", memory "89-91 ns"; qdpma.com: "89ns for local");
- a socket of the same enclosure 140 ns (qdpma.com: "139ns for remote node"
  on a 2-socket Xeon SP over UPI): each socket-to-socket link (UPI, 20.8 GB/s
  per direction) takes half the 50 ns premium, less a data message's
  serialization;
- a socket of the other enclosure 400 ns (no public measurement: NUMAlink
  7's "~500 ns", NUMAlink 4's 50 ns a router; confidence L): a socket's link
  to its enclosure's Flex ASIC and the ASIC-to-ASIC NUMALink link (13.3 GB/s)
  share the 310 ns premium;
- the cache operations: clflushopt/clwb issue 1 ns, as many in flight as
  the core has fill buffers (below); a flush of a line the socket does not
  hold 40 ns more (the broadcast); mfence 33 cycles; a memory accepts a
  written-back line in 30 ns, one every 10 ns.

The core (one parameter set for every figure; the constants below) is the
`skylake-sp` preset of fabricsim's core model (fabricsim.core_presets();
docs/cpu-presets.md cites each value), read from it here, not restated:
its L1 fill buffers bound the misses in flight, FILL_BUFFERS, the loads'
and the clflushopt/clwb's alike (the machine's flush slots; the tree's
store buffer fetches its stores' lines FILL_BUFFERS at a time,
agents/bi/store_buffer.rs), and STORE_BUFFER is its store buffer's
entries. The fill-buffer count is disputed (12 measured on Skylake, 10 the
count stated for the cores before it): the preset has 12, and Fig 12 re-runs
with 10 (a Choice's alternative). How many misses a program overlaps also
depends on the program: a chain of dependent loads (a tree lookup, Fig 3A's
latency walk) has one in flight on any core. A figure that departs from
these values says so in its NOTES and declares the departure as a Choice
whose alternative is this value.

Links inside a socket (a core or the LLC to the socket's mesh stop) cost
nothing: the mesh is in the cache latencies. Each socket's memory is a
contiguous 1 GiB range of the global memory (the paper does not say how
global memory is placed).
"""

from __future__ import annotations

from ... import core_presets

SOCKETS_PER_ENCLOSURE = 4
ENCLOSURES = 2
CORES = 28
#: one-way premiums (ns) over a local load, halved: remote socket, other enclosure
REMOTE_NS = 140.0
CROSS_NS = 400.0
LOCAL_NS = 90.0
UPI = "20.8GB/s"
UPI_BPS = 20.8e9
NUMALINK = "13.3GB/s"
NUMALINK_BPS = 13.3e9
CONTROL = 8
DATA = 72
#: the core: the skylake-sp preset (see above)
CORE = core_presets()["skylake-sp"]
#: misses in flight (its L1 fill buffers) and store-buffer entries
FILL_BUFFERS: int = CORE["fill_buffers"]
STORE_BUFFER: int = CORE["store_buffer"]
#: its clock (GHz, 2.5: BI §7) and reorder buffer
GHZ: float = 1000 / CORE["cycle_ps"]
ROB: int = CORE["rob"]
#: the fill-buffer count other sources give (docs/cpu-presets.md): Fig 12's declared alternative
FILL_BUFFERS_ALT = 10


def _ser(bps: float) -> float:
    """ns a request and a data reply spend on a link's wire, together."""
    return (CONTROL + DATA) / bps * 1e9


def superdome(
    sockets: int = SOCKETS_PER_ENCLOSURE * ENCLOSURES,
    cores: int = 1,
    bench: dict | None = None,
    bi: dict | None = None,
    workload: dict | None = None,
    max_time: str = "1s",
    name: str = "bi_superdome",
) -> dict:
    """``sockets`` sockets of ``cores`` cores, split evenly over two enclosures
    (one socket: one enclosure), running ``bench`` ([protocol.bi.bench]) on
    socket 0's first core, or else ``workload`` on every core, with ``bi``
    overriding [protocol.bi] keys."""
    per = max(1, sockets // ENCLOSURES) if sockets > 1 else 1
    enc = [s // per for s in range(sockets)]
    # one-way link latencies so that a load's round trip adds the calibrated premium
    upi = (REMOTE_NS - LOCAL_NS) / 2 - _ser(UPI_BPS) / 2
    # a cross-enclosure path: socket -> ASIC -> ASIC -> socket
    asic = 5.0
    numalink = (CROSS_NS - LOCAL_NS) / 2 - 2 * asic - _ser(NUMALINK_BPS) / 2 - _ser(UPI_BPS)
    requesters = [{"name": f"c{s}.{k}"} for s in range(sockets) for k in range(cores)]
    memories = [{"name": f"llc{s}"} for s in range(sockets)] + [{"name": f"mem{s}"} for s in range(sockets)]
    switches = [{"name": f"s{s}", "latency": "0ns"} for s in range(sockets)]
    free = {"latency": "0ns", "bandwidth": "1TB/s", "port_delay": "0ns"}
    links = [{"a": f"c{s}.{k}", "b": f"s{s}", **free} for s in range(sockets) for k in range(cores)]
    links += [{"a": f"llc{s}", "b": f"s{s}", **free} for s in range(sockets)]
    links += [{"a": f"mem{s}", "b": f"s{s}", **free} for s in range(sockets)]
    for a in range(sockets):
        for b in range(a + 1, sockets):
            if enc[a] == enc[b]:
                links.append(
                    {"a": f"s{a}", "b": f"s{b}", "latency": f"{upi:.3f}ns", "bandwidth": UPI, "port_delay": "0ns"}
                )
    if len(set(enc)) > 1:
        switches += [{"name": f"asic{e}", "latency": "0ns"} for e in sorted(set(enc))]
        links += [
            {"a": f"s{s}", "b": f"asic{enc[s]}", "latency": f"{asic:.3f}ns", "bandwidth": UPI, "port_delay": "0ns"}
            for s in range(sockets)
        ]
        links.append(
            {"a": "asic0", "b": "asic1", "latency": f"{numalink:.3f}ns", "bandwidth": NUMALINK, "port_delay": "0ns"}
        )
    proto = {
        "name": "bi",
        "control_bytes": f"{CONTROL}B",
        "data_bytes": f"{DATA}B",
        "issue_interval": "1ps",
        "bi": {"domains": sockets, **(bi or {})},
    }
    if bench is not None:
        proto["bi"]["bench"] = bench
    return {
        "name": name,
        "description": "BI's Superdome Flex: sockets as coherence domains, non-coherent global memory",
        "sim": {"seed": 1, "max_time": max_time},
        "requester": requesters,
        "switch": switches,
        "memory": memories,
        "link": links,
        "workload": workload or {"pattern": "uniform", "footprint": "1MiB", "line": "64B", "requests": 1},
        "protocol": proto,
    }


def bench_metrics(result) -> dict:
    """A sweep ``extract``: the benchmark's time per operation (ns) and, for a
    flush benchmark with ``reread``, per load after the fence."""
    s = result.summary
    p = s.get("protocol", {})
    return {
        "outcome": s["outcome"],
        "ns_per_op": p.get("bench_ns_per_op", float("nan")),
        "reread_ns": p.get("bench_reread_ns_per_op", float("nan")),
        "ops": p.get("bench_ops", 0),
        "done": p.get("bench_done", 0),
    }
