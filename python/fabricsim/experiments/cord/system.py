"""CORD's Table 1 system as a configuration dict (the same system as
``examples/cord_table1.toml``, which ``scripts/gen_cord_table1.py`` writes
from this function).

8 CPU hosts x 8 cores; each host a 2x4 mesh of routers with one core and
one LLC slice (with its directory slice) at each router; router 0 of every
host linked to one switch, ``cxl``. Choices the paper does not make:

- the cores are the ``gem5-o3-2ghz`` preset (docs/cpu-presets.md: gem5's
  O3 defaults, 8 wide, a 192-entry ROB, at gem5's default 2 GHz clock;
  the paper names neither the core model nor its clock): the mesh's
  10-cycle links are 5 ns, the LLC's 8-cycle access 4 ns
  (``protocol.directory_latency``); the front end dispatches up to 8
  operations a cycle, with no in-order issue stage (before the preset, a
  stand-in issued one operation every 0.5 ns); the write-through cores'
  own store buffer and load slots are CORD's (``protocol.cord``), and
  Table 1's private L1 and L2 are not timed in front of them (their
  stores write through; their loads in these workloads go to remote
  lines);
- Table 1's 150 ns CXL "link latency" is one host-to-host crossing, host ->
  switch -> host: each host's uplink is 75 ns (UPI's 50 ns: 25 ns);
- 64 GB/s per direction on every link; memory homed in blocks
  (``protocol.interleave`` = footprint / 64 slices), so host h's memory is
  its own 8 slices; the LLC holds the working set (no HBM access is timed).

WB (``variant = "wb"``, :func:`write_back`) runs the same system under the
MESI directory protocol instead of write-through: each core's private
cache is Table 1's L2 (64 KiB, 8 ways, 4 cycles = 2 ns), behind the
preset's L1 (Table 1's 64 KiB, 2 ways, 2 cycles = 1 ns, tags in front of
the protocol's cache, ``protocol.core.l1``), with 16 misses outstanding (the write-through cores' 16-entry
store buffer and 16 loads); the footprint is 128 MiB (the MESI directory
keeps a state per line, 16 B each: 1 GiB would need 256 MiB of it; the
stand-ins touch a few hundred KiB per core, so only the buffers' wrap
point moves).
"""

from __future__ import annotations

import copy

HOSTS, ROWS, COLS = 8, 2, 4
FOOTPRINT_MIB = 1024  # "1GiB"
#: one-way host-to-host latency is twice the uplink: CXL 150 ns, UPI 50 ns (Table 1)
UPLINK = {"CXL": "75ns", "UPI": "25ns"}


#: the WB variant's per-core cache and footprint (see the module's notes)
WB_CACHE = {"size": "64KiB", "ways": 8, "hit_latency": "2ns", "mshrs": 16, "policy": "lru"}
WB_FOOTPRINT_MIB = 128
#: Table 1's private L1, in front of WB's protocol cache (the L2)
WB_L1 = {"size": "64KiB", "ways": 2, "latency": "1ns"}
#: every core of Table 1 (docs/cpu-presets.md)
CORE = "gem5-o3-2ghz"
#: what the cores leave out, for the notes of the rows they move
CORE_GAP = (
    "Part of the gap is the core, not CORD: the cores are gem5's O3 defaults (the paper names neither model nor "
    "clock) running a stand-in loop with no computation between stores, so an epoch's stores leave in nanoseconds "
    "and the round trips are most of an epoch's time; gem5's cores running the paper's microbenchmark spend "
    "longer per epoch."
)


def write_back(b: dict) -> dict:
    """System ``b`` (a write-through Table 1 system) under WB: MESI with write-back caches, source-ordered."""
    b = copy.deepcopy(b)
    p = b["protocol"]
    p.pop("cord", None)
    p.pop("cache_latency", None)
    p["name"] = "mesi"
    p["cache"] = dict(WB_CACHE)
    # Table 1's L1 in front of the protocol's cache, which is Table 1's L2
    p["core"] = {"preset": CORE, "l1": dict(WB_L1)}
    slices = len(b["memory"])
    b["workload"]["footprint"] = f"{WB_FOOTPRINT_MIB}MiB"
    p["interleave"] = f"{WB_FOOTPRINT_MIB * 1024 // slices}KiB"
    return b


def table1(link: str = "CXL", variant: str = "cord", hosts: int = HOSTS) -> dict:
    """The Table 1 system (with ``hosts`` hosts) running CORD's synthetic workload (Fig 8's defaults);
    ``variant`` is a write-through variant (cord, so, mp) or wb."""
    routers = [f"h{h}_r{r}" for h in range(hosts) for r in range(ROWS * COLS)]
    links = []
    for h in range(hosts):
        for row in range(ROWS):
            for col in range(COLS):
                r = row * COLS + col
                if col + 1 < COLS:
                    links.append({"a": f"h{h}_r{r}", "b": f"h{h}_r{r + 1}", "latency": "5ns"})
                if row + 1 < ROWS:
                    links.append({"a": f"h{h}_r{r}", "b": f"h{h}_r{r + COLS}", "latency": "5ns"})
                links.append({"a": f"h{h}_c{r}", "b": f"h{h}_r{r}", "latency": "0.5ns"})
                links.append({"a": f"h{h}_llc{r}", "b": f"h{h}_r{r}", "latency": "0.5ns"})
        links.append({"a": f"h{h}_r0", "b": "cxl"})
    b = {
        "name": "cord_table1",
        "description": "CORD Table 1: 8 hosts x 8 cores, 2x4 mesh per host, one CXL switch",
        "sim": {"seed": 1},
        "defaults": {
            "link": {"bandwidth": "64GB/s", "latency": UPLINK[link], "port_delay": "0ns"},
            "switch": {"latency": "0.5ns"},
        },
        "workload": {
            "pattern": "remote_stores",
            "remote_stores": {
                "hosts": hosts,
                "fanout": 1,
                "store_size": "64B",
                "release_every": "4KiB",
                "compute": "0ns",
            },
            "footprint": "1GiB",
            "line": "64B",
            "warmup": 0,
            "requests": 650,
        },
        "protocol": {
            "name": "cord",
            "model": "rc",
            "directory_latency": "4ns",
            "cache_latency": "1ns",
            "control_bytes": "16B",
            "data_bytes": "80B",
            "core": {"preset": CORE},
            "interleave": f"{FOOTPRINT_MIB // (hosts * ROWS * COLS)}MiB",
            "cord": {"variant": "cord" if variant == "wb" else variant},
        },
        "switch": [{"name": "cxl"}] + [{"name": r} for r in routers],
        "requester": [{"name": f"h{h}_c{r}"} for h in range(hosts) for r in range(ROWS * COLS)],
        "memory": [{"name": f"h{h}_llc{r}"} for h in range(hosts) for r in range(ROWS * COLS)],
        "link": links,
    }
    return write_back(b) if variant == "wb" else b


def inter_host_bytes(result) -> float:
    """Bytes that crossed the hosts' uplinks to the switch (the paper's inter-PU traffic)."""
    links = result.links
    up = links[(links["from"] == "cxl") | (links["to"] == "cxl")]
    # each byte crosses two uplinks (into the switch and out of it): count it once
    return float(up[up["to"] == "cxl"]["bytes"].sum())


def finish_ps(result) -> float:
    """When the last core completed its last operation (ps): the application's execution time, as a
    simulator that ends when its threads exit measures it. Messages still in flight then (posted stores,
    a last Release's notifications and ack) are not waited for: a run's quiescence (``sim_time_ps``) adds
    that drain tail, a few crossings, which a short run's time would be mostly made of."""
    return float(result.requesters["finished_ns"].max()) * 1000.0


def traffic_metrics(result) -> dict[str, float]:
    """A sweep's ``extract``: the inter-host traffic of one run and when its cores finished."""
    return {"inter_host_bytes": inter_host_bytes(result), "finish_ps": finish_ps(result)}


def points(
    base: dict,
    name: str,
    metrics: list[str],
    params: dict,
    labels: dict,
    variants: list[str] | None = None,
    traffic: bool = True,
) -> list:
    """The sweep points of one system (``base``) with ``params`` set, one per variant if ``variants``
    (write-through ones or "wb"; labelled ``variant``), measuring ``metrics`` and, with ``traffic``, the
    inter-host bytes."""
    from ...sweeps import build

    extract = "fabricsim.experiments.cord.system:traffic_metrics" if traffic else None
    wt = [v for v in variants or [] if v != "wb"]
    out = []
    if wt or not variants:
        sw = build(base, grid={"protocol.cord.variant": wt} if wt else {}, metrics=metrics, name=name, extract=extract)
        for p in sw.points:
            p.labels = {**labels, **({"variant": p.params["protocol.cord.variant"]} if variants else {})}
        out += sw.points
    if "wb" in (variants or []):
        # the write-through runs' protocol statistics do not exist under MESI
        kept = [m for m in metrics if not m.startswith("protocol.")]
        for p in build(write_back(base), grid={}, metrics=kept, name=name, extract=extract).points:
            p.labels = {**labels, "variant": "wb"}
            out.append(p)
    for p in out:
        p.params.update(params)
    return out
