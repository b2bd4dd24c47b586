"""ESF Fig 14: snoop-filter victim policies (FIFO, LRU, LFI, LIFO, MRU),
bandwidth, latency and invalidations normalised to FIFO.

The paper (Sec. V-B): one requester issues coherent requests, 90 % to a hot
10 % of the footprint, through a private cache holding 20 % of the
footprint; misses cross a bus of infinite bandwidth to the memory devices,
whose DCOH keeps an inclusive snoop filter as large as the cache and
back-invalidates (BISnp) a victim's owner when it is full. Its statements:
LIFO improves bandwidth by 5 % and cuts latency by 15 % and invalidations by
16 % against FIFO; FIFO behaves like LRU and LIFO like MRU (few snoop-filter
hits); LFI cuts invalidations by 15 % but is slightly worse than LIFO/MRU.
The cause: the filter mostly sees cold misses, so the newest entries are
cold and the oldest are the hot lines the cache keeps."""

from __future__ import annotations

import pandas as pd

from ...sweeps import Sweep, build
from .. import Experiment
from ..plots import figure_legend, paper_point
from ..variants import Choice, Mutant, Variant
from ..verdicts import Predicate, Row, all_of, flat, greater, text

FIG = "ESF Fig 14"
SECTION = "Sec. V-B"
POLICIES = ["fifo", "lru", "lfi", "lifo", "mru"]
METRICS = ["throughput_GBps", "latency_ns.mean", "protocol.bisnp_victim", "protocol.mean_bi_wait_ns", "outcome"]

NOTES = """\
The system is examples/esf_dcoh.toml: the DCOH protocol (agents/cxl/dcoh.rs),
the same code `fabricsim check examples/check/dcoh.toml` proves, timed.
Modelling choices (the paper gives the ratios, not the sizes):
- Footprint 640 KiB (10 240 lines), hot set its first 10 %; the requester's
  cache 128 KiB (20 %), 8-way LRU, 16 requests in flight (its request queue; the seed's
  other requesters keep 1024 outstanding: a robustness alternative),
  one request per 10 ns (Table III's requester process), 12 ns hits.
- 4 memory devices, lines interleaved over them, each with a fully
  associative snoop filter of 512 entries: together as large as the cache
  (the paper: "the size of the SF is set to be the same with the local cache
  size"). Table III's latencies (controller 40 ns, port 25 ns, switch 20 ns,
  bus 1 ns), links of 10 TB/s for the paper's infinite bus bandwidth,
  memory reads of 40 ns.
- Reads and writes half and half; writes need exclusive ownership (MemRdE),
  reads get shared copies (MemRdS). Clean evictions from the cache are silent,
  so the filter keeps entries of lines the cache dropped (the paper's
  mechanism needs this: with eviction notices the filter would mirror the
  cache and never choose a victim the cache still holds).
- 16 000 measured requests (the paper's 4 endpoints x 4000) after 16 000
  warm-up requests; invalidations are counted over the whole run.
Nothing is tuned for this figure."""


def base() -> dict:
    return {
        "name": "esf-fig14",
        "defaults": {
            "link": {"bandwidth": "10TB/s", "latency": "1ns", "port_delay": "25ns"},
            "switch": {"latency": "20ns"},
        },
        "requester": [{"name": "host0"}],
        "switch": [{"name": "sw0"}],
        "memory": [{"name": f"dev{i}"} for i in range(4)],
        "link": [{"a": "host0", "b": "sw0"}] + [{"a": "sw0", "b": f"dev{i}"} for i in range(4)],
        "workload": {
            "pattern": "hotspot",
            "hot_fraction": 0.1,
            "hot_probability": 0.9,
            "footprint": "640KiB",
            "line": "64B",
            "read_fraction": 0.5,
            "warmup": 16000,
            "requests": 16000,
        },
        "protocol": {
            "name": "dcoh",
            "model": "rc",
            "issue_interval": "10ns",
            "directory_latency": "40ns",
            "memory_latency": "40ns",
            "cache": {"size": "128KiB", "ways": 8, "policy": "lru", "hit_latency": "12ns", "mshrs": 16},
            "dcoh": {"snoop_filter": {"size": "32KiB", "policy": "fifo"}},
        },
    }


def sweep(quick: bool) -> Sweep:
    # One run takes well under a second: --quick runs the full size too.
    sw = build(base(), grid={"protocol.dcoh.snoop_filter.policy": POLICIES}, metrics=METRICS, name="esf/fig14")
    for p in sw.points:
        p.labels = {"policy": p.params["protocol.dcoh.snoop_filter.policy"]}
    return sw


def analyze(df: pd.DataFrame) -> pd.DataFrame:
    d = df.rename(
        columns={
            "latency_ns.mean": "latency_ns",
            "protocol.bisnp_victim": "invalidations",
            "protocol.mean_bi_wait_ns": "bi_wait_ns",
        }
    ).set_index("policy")
    fifo = d.loc["fifo"]
    out = pd.DataFrame(index=POLICIES)
    out.index.name = "policy"
    for col in ("throughput_GBps", "latency_ns", "invalidations", "bi_wait_ns"):
        out[col] = [float(d.loc[p, col]) for p in POLICIES]
    out["bandwidth_vs_fifo"] = out["throughput_GBps"] / float(fifo["throughput_GBps"])
    out["latency_vs_fifo"] = out["latency_ns"] / float(fifo["latency_ns"])
    out["invalidations_vs_fifo"] = out["invalidations"] / max(float(fifo["invalidations"]), 1.0)
    return out.reset_index()


PAPER = {  # Sec. V-B's numbers, normalised to FIFO (the reference column, never an output)
    ("lifo", "bandwidth_vs_fifo"): 1.05,
    ("lifo", "latency_vs_fifo"): 0.85,
    ("lifo", "invalidations_vs_fifo"): 0.84,
    ("lfi", "invalidations_vs_fifo"): 0.85,
}


def plot(data: pd.DataFrame, fig) -> None:
    axes = fig.subplots(1, 3)
    for ax, col, title in zip(
        axes,
        ["bandwidth_vs_fifo", "latency_vs_fifo", "invalidations_vs_fifo"],
        ["bandwidth", "average latency", "invalidations"],
    ):
        ax.bar(range(len(POLICIES)), data[col], label="fabricsim")
        for (pol, c), v in PAPER.items():
            if c == col:
                paper_point(ax, POLICIES.index(pol), v, "text", label="paper (text)")
        ax.set_xticks(range(len(POLICIES)), [p.upper() for p in POLICIES])
        ax.axhline(1.0, color="grey", lw=0.8)
        ax.set_title(f"{title} ÷ FIFO")
        ax.grid(True, axis="y", alpha=0.3)
    figure_legend(fig)
    fig.suptitle("ESF Fig 14: snoop-filter victim policies, normalised to FIFO")


def _v(data, policy, col):
    return float(data.loc[data["policy"] == policy, col].iloc[0])


COLD = (
    "Most requests reaching the snoop filter are cold misses: the newest entries are cold lines the cache "
    "will drop anyway, the oldest are hot lines it keeps, so FIFO's victims cost a BISnp and a re-fetch."
)


def compare(data: pd.DataFrame) -> list[Row]:
    bw, lat, inv = "bandwidth_vs_fifo", "latency_vs_fifo", "invalidations_vs_fifo"
    alike = all_of(
        "LRU within 10% of FIFO and MRU within 10% of LIFO, in bandwidth, latency and invalidations",
        {
            f"{a}/{b} {col.split('_')[0]}": flat([b, a], [_v(data, b, col), _v(data, a, col)], 0.1)
            for a, b in (("lru", "fifo"), ("mru", "lifo"))
            for col in (bw, lat, inv)
        },
    )
    lfi_bw, lfi_lat = _v(data, "lfi", bw), _v(data, "lfi", lat)
    # "slightly worse performance compared to LIFO and MRU": performance is Fig 14's bandwidth and latency;
    # worse strictly, by more than 1 % (so a tie is not "worse"), than each of LIFO and MRU; "slightly": still
    # no worse than FIFO, the baseline the paper's LFI improves on.
    lfi_worse = all_of(
        "LFI's bandwidth below and latency above each of LIFO's and MRU's by > 1%, and no worse than FIFO's",
        {
            **{
                f"{p.upper()} bw": greater(_v(data, p, bw), lfi_bw, f"{p.upper()} bandwidth", "LFI's", margin=0.01)
                for p in ("lifo", "mru")
            },
            **{
                f"{p.upper()} lat": greater(lfi_lat, _v(data, p, lat), "LFI latency", f"{p.upper()}'s", margin=0.01)
                for p in ("lifo", "mru")
            },
            "vs FIFO": Predicate("LFI bandwidth ≥ FIFO's and latency ≤ FIFO's", lfi_bw >= 1.0 >= lfi_lat, ""),
        },
    )
    # The paper states changes against FIFO ("improves ... by 5%", "decreasing ... by 15%"): each row's
    # number is that change, and fabricsim's comparable value is its own change against FIFO.
    return [
        Row(
            FIG,
            "LIFO bandwidth ÷ FIFO",
            0.05,
            text(SECTION, "Compared to FIFO, LIFO improves the bandwidth by 5%", precision=0.005),
            _v(data, "lifo", bw) - 1,
            greater(_v(data, "lifo", bw), 1.0, "LIFO ÷ FIFO", "1"),
            COLD,
            MAGNITUDE,
        ),
        Row(
            FIG,
            "LIFO latency ÷ FIFO",
            0.15,
            text(SECTION, "decreasing the average latency and invalidation count by 15% and 16%", precision=0.005),
            1 - _v(data, "lifo", lat),
            greater(1.0, _v(data, "lifo", lat), "1", "LIFO ÷ FIFO"),
            COLD,
            MAGNITUDE,
        ),
        Row(
            FIG,
            "LIFO invalidations ÷ FIFO",
            0.16,
            text(SECTION, "decreasing the average latency and invalidation count by 15% and 16%", precision=0.005),
            1 - _v(data, "lifo", inv),
            greater(1.0, _v(data, "lifo", inv), "1", "LIFO ÷ FIFO"),
            COLD,
            MAGNITUDE,
        ),
        Row(
            FIG,
            "LFI invalidations ÷ FIFO",
            0.15,
            text(SECTION, "LFI reduces invalidation count by 15% compared to FIFO", precision=0.005),
            1 - _v(data, "lfi", inv),
            greater(1.0, _v(data, "lfi", inv), "1", "LFI ÷ FIFO"),
            "LFI evicts the line inserted least often: cold lines, inserted once, go before hot ones.",
        ),
        Row(
            FIG,
            "LFI slightly worse than LIFO",
            None,
            text(SECTION, "This leads to a slightly worse performance compared to LIFO and MRU"),
            lfi_bw / _v(data, "lifo", bw),
            lfi_worse,
            "Once hot lines have been inserted as often as each other, LFI's ties fall back to the oldest "
            "insertion and it evicts hot lines again.",
        ),
        Row(
            FIG,
            "FIFO ≈ LRU and LIFO ≈ MRU",
            None,
            text(SECTION, "Since there is little hit event in the SF, FIFO and LRU behave similarly to LIFO and MRU"),
            _v(data, "lru", inv) / _v(data, "fifo", inv),
            alike,
            "A snoop-filter entry is touched only by a miss on its line; the cache absorbs the hot lines' hits, "
            "so recency order equals insertion order (the paper's sentence pairs them the other way; its "
            "figure and explanation pair FIFO with LRU).",
        ),
    ]


MAGNITUDE = (
    "the direction holds but fabricsim's gain is 2-3x the paper's: LIFO avoids 37 % of FIFO's invalidations "
    "(paper 16 %) and cuts latency by 38 % (paper 15 %). Measured under every alternative of the robustness "
    "table and more (fully associative cache 45 % fewer invalidations, read-only 49 %, page interleave 37 %, "
    "4 MSHRs 37 %): the share is the fraction of FIFO's victims that are hot lines the cache still holds, "
    "which follows from sizes the paper does not give (footprint, lines per filter, the cache's policy and "
    "associativity); what makes ESF's share 16 % was not found. The latency gain is the larger because with "
    "the paper's infinite bus a request's latency is mostly its wait for a victim's BISnp round trip."
)

MUTANTS = [
    Mutant(
        "no-hot-set",
        "uniform traffic (hot probability = hot fraction): no hot lines for FIFO to evict, the newest entry "
        "is the line just fetched",
        set={"workload.hot_probability": 0.1},
        # the three LIFO rows turn to the other sign under it too, but they already disagree without it
        # (their direction holds, their magnitude is 2-3x the paper's)
        flips=["LFI invalidations ÷ FIFO", "LFI slightly worse than LIFO"],
    ),
]

CHOICES = [
    Choice(
        "requester cache associativity",
        "8-way LRU",
        [Variant("full", "a fully associative LRU cache", set={"protocol.cache.ways": "full"})],
    ),
    Choice(
        "read:write mix",
        "1:1 (writes need exclusive ownership)",
        [Variant("reads", "read-only requests (shared copies only)", set={"workload.read_fraction": 1.0})],
    ),
    Choice(
        "one snoop filter or one per device",
        "4 devices of 512 entries, lines interleaved",
        [
            Variant(
                "4KiB-interleave",
                "4 KiB pages interleaved over the devices instead of lines",
                set={"protocol.interleave": "4KiB"},
            )
        ],
    ),
    Choice(
        "requests in flight",
        "16 in flight (the cache's MSHRs)",
        [
            Variant(
                "1024 in flight",
                "1024 MSHRs: the 1024 outstanding requests of the seed's other requesters (Figs 7, 10-13, 16-20)",
                set={"protocol.cache.mshrs": 1024},
            )
        ],
    ),
]

EXPERIMENT = Experiment(
    seed="esf",
    figure="fig14",
    title="ESF Fig 14: snoop-filter victim policies",
    sweep=sweep,
    analyze=analyze,
    plot=plot,
    compare=compare,
    notes=NOTES,
    mutants=MUTANTS,
    choices=CHOICES,
)
