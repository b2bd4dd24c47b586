"""The GCS paper's MIND cluster (§4.1, §5) as a configuration dict: compute
blades of worker threads, one programmable switch holding the directory,
one memory blade. One parameter set serves every figure.

The paper gives no latency table, only that a coherence transaction takes
5–10 µs over ~100 Gb/s RDMA (§1). Calibrated values, each a parameter here
(the issue note gives the same list):

- a blade's link to the switch: 2 µs one way (RDMA write latency over a
  ToR switch, NIC to NIC, is about 1–2 µs on ConnectX-5; the kernel's
  posting of the message is in the blade's time below), 100 Gb/s (§5);
- the memory blade's link: the same, 400 Gb/s (its four ConnectX-5s);
- the switch directory: 0.3 µs per message (a Tofino pipeline pass plus
  the recirculation MIND uses, "≪ 1 µs");
- a blade's cache controller: 1 µs per message it handles (an in-kernel
  handler: a page fault's entry and exit, about 1 µs on Linux);
- a thread's own step (the lock call before it reaches the controller, and
  the unlock): 0.1 µs;
- the memory blade's RDMA read of a line: 1 µs;
- a blade NIC's processing unit: 1 µs per network message it receives,
  one at a time (the queueing §5.2 blames for writers' latency rising with
  threads). It is modelled as the blade's occupancy after it handled the
  message, so a local lock call arriving meanwhile waits too.

A transaction that misses (I→S: blade, switch, memory blade, switch,
blade) then takes 2 × (2 + 0.3 + 2) + 1 + 2 × 1 ≈ 11.6 µs and one between
two blades (a hand-off) 2 × 2 + 0.3 + 2 × 1 ≈ 6.3 µs, the paper's 5–10 µs.

Choices the paper does not make: each blade's threads share one
controller (busy only for the NIC's time above); the locks'
regions are 1 KiB (§5.2's shared state) in 4 KiB pages; a lock's data and
its page are in separate lines only without combined data.
"""

from __future__ import annotations

BLADES = 8
THREADS = 10
NET = "2us"
BLADE = "1us"
SWITCH = "0.3us"
THREAD = "0.1us"
MEMORY = "1us"
NIC = "1us"


def mind(
    blades: int = BLADES,
    threads: int = THREADS,
    variant: str = "gcs",
    pattern: str = "own_line",
    locks: int | None = None,
    read_fraction: float = 1.0,
    requests: int = 200,
    region: str = "1KiB",
    critical_section: str = "0us",
    warmup: int | None = None,
) -> dict:
    """``blades`` blades of ``threads`` threads, each thread ``requests``
    acquisitions (after as many for warm-up) of ``locks`` locks (default:
    one per thread index, the microbenchmark's lock i), reading with
    probability ``read_fraction``."""
    locks = threads if locks is None else locks
    req = [{"name": f"t{b}.{t}"} for b in range(blades) for t in range(threads)]
    links = [
        {"a": f"t{b}.{t}", "b": f"b{b}", "latency": "0ns", "bandwidth": "1TB/s", "port_delay": "0ns"}
        for b in range(blades)
        for t in range(threads)
    ]
    links += [
        {"a": f"blade{b}", "b": f"b{b}", "latency": "0ns", "bandwidth": "1TB/s", "port_delay": "0ns"}
        for b in range(blades)
    ]
    links += [
        {"a": f"b{b}", "b": "tor", "latency": NET, "bandwidth": "100Gb/s", "port_delay": "0ns"} for b in range(blades)
    ]
    links += [
        {"a": "switch", "b": "tor", "latency": "0ns", "bandwidth": "6400Gb/s", "port_delay": "0ns"},
        {"a": "memory", "b": "tor", "latency": NET, "bandwidth": "400Gb/s", "port_delay": "0ns"},
    ]
    return {
        "name": "gcs_mind",
        "description": "GCS on MIND: compute blades, a switch directory, a memory blade",
        "sim": {"seed": 1},
        "requester": req,
        "switch": [{"name": f"b{b}", "latency": "0ns"} for b in range(blades)] + [{"name": "tor", "latency": "0ns"}],
        "memory": [{"name": f"blade{b}"} for b in range(blades)] + [{"name": "switch"}, {"name": "memory"}],
        "link": links,
        "workload": {
            "pattern": pattern,
            "read_fraction": read_fraction,
            "footprint": f"{locks * 64}B",
            "line": "64B",
            "requests": requests,
            "warmup": requests if warmup is None else warmup,
            "window": 1,
        },
        "protocol": {
            "name": "gcs",
            "cache_latency": THREAD,
            "directory_latency": SWITCH,
            "memory_latency": MEMORY,
            "issue_interval": "1ns",
            "control_bytes": "64B",
            "data_bytes": "64B",
            "gcs": {
                "variant": variant,
                "region": region,
                "blade_latency": BLADE,
                "critical_section": critical_section,
                "nic_service": NIC,
            },
        },
    }


def lock_metrics(result) -> dict:
    """A sweep ``extract``: acquisitions per second (Mops) in the
    steady-state window (every thread still running) and over the whole
    run, and the acquisition latency's mean and quartiles (µs) read off
    the latency histogram (each bucket at its midpoint)."""
    s = result.summary
    lat = s["latency_ns"]
    out = {
        "outcome": s["outcome"],
        # completions inside the steady-state window (each "request" is one 64 B line: one acquisition)
        "mops": s["throughput_GBps"] * 1e9 / 64 / 1e6,
        # YCSB's measure: every operation over the run's length (a lock that starves some threads
        # until the end shows here, not in a window that closes when the first thread is done)
        "mops_run": s["requests"]["completed"] / (s["sim_time_ps"] * 1e-12) / 1e6 if s["sim_time_ps"] else 0.0,
        "lat_mean_us": lat.get("mean", float("nan")) / 1000,
    }
    h = result.latency
    h = h[h["scope"] == "all"]
    mid = ((h["lo_ns"] + h["hi_ns"]) / 2 / 1000).tolist()
    counts = h["count"].tolist()
    total = sum(counts)
    for q, name in (
        (0.05, "lat_p5_us"),
        (0.25, "lat_q1_us"),
        (0.5, "lat_med_us"),
        (0.75, "lat_q3_us"),
        (0.95, "lat_p95_us"),
    ):
        seen, value = 0, float("nan")
        for m, c in zip(mid, counts):
            seen += c
            if total and seen >= q * total:
                value = m
                break
        out[name] = value
    return out


def set_net(cfg: dict, latency: str) -> None:
    """Edit a MIND configuration: every blade's and the memory blade's link to the switch."""
    for link in cfg["link"]:
        if link["b"] == "tor" and link["a"] != "switch":
            link["latency"] = latency
