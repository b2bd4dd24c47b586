"""The system of ESF Figs 16 and 17 (Sec. V-D): one requester issuing random
reads and writes at a set mix over one PCIe bus to a switch with four memory
devices; the bus is full or half duplex, and header-only packets (read
requests, write acknowledgements) are `header_overhead` times the payload
length. Shared by fig16.py and fig17.py: their points are the same, so a
reproduction simulates them once."""

from __future__ import annotations

from typing import Any

from ...sweeps import Sweep, build
from ..variants import Choice, Mutant, Variant
from . import fig10

READ_FRACTIONS = [1.0, 0.75, 0.5, 0.25, 0.0]
MIX_LABELS = {1.0: "1:0", 0.75: "3:1", 0.5: "1:1", 0.25: "1:3", 0.0: "0:1"}
HEADERS = [0.0, 0.25, 0.5, 0.75, 1.0]

NOTES = """\
Modelling choices (the paper gives the system but not its numbers):
- The bus is a PCIe 5.0 x16 link (63.0 GB/s per direction after 128b/130b
  encoding) between the requester and a switch; the switch reaches the four
  memories over 256 GB/s links, and memories have no media bandwidth limit,
  so the bus is the only bottleneck (the validation system's DDR5-4800 DIMMs are an
  alternative); half duplex reverses with no turnaround
  time (the paper does not give one).
- A data packet is one 64 B line (the paper counts header overhead only on
  header packets); a header-only packet (read request, write acknowledgement)
  is header_overhead x 64 B, so with header overhead 0 it takes no bus time.
- Bus utility averages over the bus's transmission directions: two for full
  duplex, one (the shared medium) for half duplex; see `bus_metrics`.
- Random addresses interleaved per line over the four memories; closed loop
  with 1024 outstanding requests so the bus saturates; 4 x 4000 measured
  requests after 2000 warm-up (the paper's 4000 per endpoint), also with
  --quick (the whole grid takes seconds).
Nothing is tuned per point. The robustness table re-runs the grid with each
alternative below."""

SECTION = "Sec. V-D"


def base(quick: bool) -> dict[str, Any]:
    mems = [f"mem{i}" for i in range(4)]
    return {
        "name": "esf-duplex",
        "defaults": {
            "link": {"bandwidth": "PCIe5x16"},
            "memory": {"bandwidth": "inf", "queue": 4096},
        },
        "requester": [{"name": "req0"}],
        "switch": [{"name": "sw0"}],
        "memory": [{"name": m} for m in mems],
        "link": [{"a": "req0", "b": "sw0"}] + [{"a": "sw0", "b": m, "bandwidth": "256GB/s"} for m in mems],
        "workload": {
            "pattern": "uniform",
            "window": 1024,
            "interleave": "64B",
            "warmup": 2000,
            "requests": 16000,
        },
    }


def bus_metrics(result) -> dict[str, float]:
    """Bus utility and transmission efficiency, ESF Fig 17's metrics.

    The paper: utility is "the fraction of time when the bus is busy compared
    to the total simulation time (average in all transmission directions)".
    A full-duplex bus has two transmission directions, so its utility is the
    mean of their busy fractions; a half-duplex bus transmits in one
    direction at a time over one medium, so its utility is that medium's busy
    fraction (the sum over the two directions). ``bus_utility_directions``
    is the other reading, the mean over two directions for either kind of
    bus (a robustness alternative). Efficiency is payload time over busy time."""
    links = result.links
    bus = links[links["link"] == 0]
    busy = bus["busy_ns"].sum()
    payload = (bus["efficiency"] * bus["busy_ns"]).sum()
    half = (bus["duplex"] == "half").all()
    return {
        "bus_utility": float(bus["utilization"].sum() if half else bus["utilization"].mean()),
        "bus_utility_directions": float(bus["utilization"].mean()),
        "bus_efficiency": float(payload / busy) if busy else 0.0,
    }


def sweep(quick: bool, name: str) -> Sweep:
    sw = build(
        base(quick),
        grid={
            "link[0].duplex": ["full", "half"],
            "workload.header_overhead": HEADERS,
            "workload.read_fraction": READ_FRACTIONS,
        },
        metrics=["throughput_GBps", "outcome"],
        name=name,
        extract="fabricsim.experiments.esf.duplex:bus_metrics",
    )
    for p in sw.points:
        p.labels = {
            "duplex": p.params["link[0].duplex"],
            "header_overhead": p.params["workload.header_overhead"],
            "mix": MIX_LABELS[p.params["workload.read_fraction"]],
        }
    return sw


def tidy(df):
    d = df.rename(columns={"workload.read_fraction": "read_fraction"}).copy()
    ro = d[d["read_fraction"] == 1.0].set_index(["duplex", "header_overhead"])["throughput_GBps"]
    d["normalized_bandwidth"] = [
        t / ro[(dx, h)] for t, dx, h in zip(d["throughput_GBps"], d["duplex"], d["header_overhead"])
    ]
    order = {m: i for i, m in enumerate(MIX_LABELS.values())}
    d["mix_order"] = d["mix"].map(order)
    cols = [
        "duplex",
        "header_overhead",
        "mix",
        "read_fraction",
        "throughput_GBps",
        "normalized_bandwidth",
        "bus_utility",
        "bus_utility_directions",
        "bus_efficiency",
    ]
    return d.sort_values(["duplex", "header_overhead", "mix_order"])[cols].reset_index(drop=True)


# ---------------------------------------------------------------- mutant and alternatives (Figs 16 and 17)


def _is_full(labels) -> bool:
    return labels.get("duplex") == "full"


SHARED_WIRE = Mutant(
    "shared-wire",
    "the 'full duplex' runs send both directions over one half-duplex wire",
    set={"link[0].duplex": "half"},
    when=_is_full,
)

HALF_AS_FULL = Mutant(
    "half-as-full",
    "the 'half duplex' runs get a full-duplex bus",
    set={"link[0].duplex": "full"},
    when=lambda labels: labels.get("duplex") == "half",
)

FREE_HEADERS = Mutant(
    "free-headers",
    "header-only packets take no bus time whatever the header overhead",
    set={"workload.header_overhead": 0.0},
)


def _no_switch(cfg: dict, labels) -> None:
    cfg["switch"] = []
    cfg["memory"] = [{"name": "mem0"}]
    cfg["link"] = [{"a": "req0", "b": "mem0"}]


def _data_header(labels) -> dict:
    return {"workload.data_header": f"{round(64 * labels['header_overhead'])}B"}


def _half_turnaround(labels) -> dict:
    # a turnaround on a full-duplex link is a configuration error
    return {"link[0].turnaround": "10ns"} if labels.get("duplex") == "half" else {}


CHOICES = [
    fig10.MEMORY,
    Choice(
        "headers on data packets",
        "none: only header-only packets carry the header overhead",
        [Variant("data headers", "data packets also carry header_overhead x 64 B", set_per_point=_data_header)],
    ),
    Choice(
        "the switch between the bus and the memories",
        "one switch, four memories behind 256 GB/s links",
        [Variant("no switch", "one memory directly on the bus", edit=_no_switch)],
    ),
    Choice(
        "bus utility of a half-duplex bus",
        "busy fraction of its one medium (mean over transmission directions: 1 for half, 2 for full)",
        [
            Variant(
                "two directions",
                "mean over two directions for either bus",
                columns={"bus_utility": "bus_utility_directions"},
            )
        ],
    ),
    Choice(
        "half-duplex turnaround",
        "0 ns (the paper gives none)",
        [Variant("10 ns turnaround", "10 ns to reverse a half-duplex bus", set_per_point=_half_turnaround)],
    ),
    Choice(
        "outstanding requests",
        "1024",
        [Variant("window 64", "64 outstanding requests", set={"workload.window": 64})],
    ),
]
