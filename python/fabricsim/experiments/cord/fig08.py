"""CORD Fig 8: sensitivity to Relaxed store granularity, synchronization
granularity and communication fanout (one thread writing to other hosts),
execution time and inter-host traffic of SO and MP normalised to CORD's,
over CXL and UPI.

The paper (§5.3): larger stores raise CORD's benefit over SO (63 % / 50 %
lower time at 4 KB stores, CXL / UPI) while its traffic saving shrinks
(< 10 % at 1 KB stores); larger synchronization granularities shrink the
benefit (< 20 % by 256 KB) with a flat ~20 % traffic saving; at fanout 7
CORD is still > 25 % / > 20 % faster than SO, 20 % slower than MP on CXL and
< 5 % on UPI; at fanout 1 CORD equals MP (no notification is sent)."""

from __future__ import annotations

import pandas as pd

from ...sweeps import Sweep
from .. import Experiment
from ..plots import figure_legend
from ..variants import Choice, Mutant, Variant
from ..verdicts import Predicate, Row, Tolerance, all_of, flat, monotone, text
from . import system
from .system import CORE_GAP, table1

FIG = "CORD Fig 8"
SECTION = "§5.3, Sensitivity"
VARIANTS = ["so", "cord", "mp"]
LINKS = ["CXL", "UPI"]
KIB = 1024
PANELS = {
    # panel: (swept key, full values, quick values); the others at Fig 8's defaults
    # --quick keeps 1 KB: the paper states the traffic saving there
    "store": ("store_size", [8, 64, 256, 1024, 4096], [64, 1024, 4096]),
    "sync": ("release_every", [64, 1 * KIB, 4 * KIB, 64 * KIB, 256 * KIB, 2048 * KIB], [64, 4 * KIB, 256 * KIB]),
    "fanout": ("fanout", [1, 2, 3, 5, 7], [1, 7]),
}
DEFAULTS = {"store_size": 64, "release_every": 4 * KIB, "fanout": 1}

NOTES = """
System: CORD's Table 1 (fabricsim.experiments.cord.system: 8 hosts x 8
cores, a 2x4 mesh per host, one switch; the gem5-o3-2ghz core preset; one host-to-host
crossing is 150 ns on CXL, 50 ns on UPI; 64 GB/s links). The stand-in for
the paper's microbenchmark is pattern "remote_stores" with senders = "one":
core 0 of host 0 loops over epochs of Relaxed write-through stores to the
next `fanout` hosts' memory (round-robin, one LLC slice per host), then one
Release of a flag there. Defaults: 64 B stores, fanout 1 and 4 KB per
Release: the caption's 4 KB, not the text's 2 MB (at 2 MB the 64 GB/s
link's transmission hides the round trip, so no store-size effect could
show; the text's 2 MB is an alternative in the robustness table).
Execution time is the simulated time until every message is handled (the
last Release's ack included); traffic is the bytes crossing the
hosts' uplinks to the switch (each counted once). Epochs per run: 100 (--quick
quick too) for up to 4 KB per Release, fewer for larger (at least 4), so each
run moves at least 1 MB. The fabric forwards whole messages
(store-and-forward): a 4 KB store pays its 64 ns serialization at every
hop, which lengthens SO's round trip at large stores (a flit-level
cut-through fabric would not).

Choices the paper does not make: the core is gem5's O3 at 2 GHz (the
gem5-o3-2ghz preset: up to 8 operations dispatched a cycle, no in-order
issue stage; the stand-in before it issued one every 0.5 ns, an
alternative in the robustness table) and stores go into CORD's 16-entry
store buffer; an SO
Release waits in the store buffer for earlier acks while the core goes on
filling the buffer; messages have a 16 B header (a 64 B store is 80 B on
the wire), an ack is 16 B; CORD's Table 3 table sizes.
"""


def base(link: str = "CXL", variant: str = "cord") -> dict:
    b = table1(link, variant)
    b["name"] = "cord-fig8"
    b["workload"]["remote_stores"]["senders"] = "one"
    return b


def epochs(sync: int, quick: bool) -> int:
    # enough epochs that the last Release's ack (one round trip) is a small part of the time
    if sync <= 4 * KIB:
        return 100
    return max(4, (1024 * KIB) // sync)


def _requests(store: int, sync: int, quick: bool) -> int:
    return epochs(sync, quick) * (max(1, sync // store) + 1)


def sweep(quick: bool) -> Sweep:
    points = []
    for panel, (key, full, short) in PANELS.items():
        for x in short if quick else full:
            shape = {**DEFAULTS, key: x}
            for link in LINKS:
                points += system.points(
                    base(link),
                    "cord/fig08",
                    ["sim_time_ps", "protocol.req_notis", "protocol.ack_wait_ns", "outcome"],
                    {
                        "workload.remote_stores.store_size": f"{shape['store_size']}B",
                        "workload.remote_stores.release_every": f"{shape['release_every']}B",
                        "workload.remote_stores.fanout": shape["fanout"],
                        "workload.requests": _requests(shape["store_size"], shape["release_every"], quick),
                    },
                    {"panel": panel, "x": x, "link": link},
                    variants=VARIANTS,
                )
    return Sweep("cord/fig08", points)


def analyze(df: pd.DataFrame) -> pd.DataFrame:
    d = df.rename(columns={"protocol.req_notis": "req_notis", "protocol.ack_wait_ns": "ack_wait_ns"}).copy()
    d["time_us"] = d["sim_time_ps"] / 1e6
    ref = d[d["variant"] == "cord"].set_index(["panel", "x", "link"])
    idx = list(zip(d["panel"], d["x"], d["link"]))
    d["time_norm"] = [t / ref.loc[i, "time_us"] for t, i in zip(d["time_us"], idx)]
    d["traffic_norm"] = [b / ref.loc[i, "inter_host_bytes"] for b, i in zip(d["inter_host_bytes"], idx)]
    order = {p: i for i, p in enumerate(PANELS)}
    d["order"] = d["panel"].map(order)
    d = d.sort_values(["order", "link", "variant", "x"]).drop(columns="order")
    cols = ["panel", "x", "link", "variant", "time_us", "inter_host_bytes", "time_norm", "traffic_norm", "req_notis"]
    return d[cols].reset_index(drop=True)


def plot(data: pd.DataFrame, fig) -> None:
    axes = fig.subplots(len(LINKS), len(PANELS), squeeze=False)
    xlabel = {"store": "Relaxed store size (B)", "sync": "bytes per Release", "fanout": "fanout (hosts)"}
    for r, link in enumerate(LINKS):
        for c, panel in enumerate(PANELS):
            ax = axes[r][c]
            tw = ax.twinx()
            for v, color in (("so", "C0"), ("mp", "C2")):
                d = data[(data["panel"] == panel) & (data["link"] == link) & (data["variant"] == v)]
                ax.plot(d["x"], d["time_norm"], marker="o", color=color, label=f"{v.upper()} time")
                tw.plot(d["x"], d["traffic_norm"], marker="s", ls="--", color=color, label=f"{v.upper()} traffic")
            ax.axhline(1.0, color="grey", lw=0.8)
            if panel != "fanout":
                ax.set_xscale("log", base=2)
            ax.set_xlabel(xlabel[panel])
            ax.set_ylabel(f"{link}: time / CORD")
            tw.set_ylabel("traffic / CORD")
            ax.grid(True, alpha=0.3)
    figure_legend(fig)
    fig.suptitle("CORD Fig 8: one thread writing to other hosts; SO and MP normalised to CORD")


def _pick(data: pd.DataFrame, panel: str, link: str, variant: str) -> pd.DataFrame:
    return data[(data["panel"] == panel) & (data["link"] == link) & (data["variant"] == variant)].sort_values("x")


def _reduction(data: pd.DataFrame, panel: str, link: str, col: str = "time_norm") -> tuple[list, list[float]]:
    """CORD's reduction against SO (1 - CORD / SO) along a panel."""
    so = _pick(data, panel, link, "so")
    return list(so["x"]), [1 - 1 / v for v in so[col]]


def _at(xs: list, ys: list[float], x) -> float:
    return ys[xs.index(x)] if x in xs else float("nan")


def compare(data: pd.DataFrame) -> list[Row]:
    rows = []
    for link, paper_store, paper_fan, paper_mp in (("CXL", 0.63, 0.25, 0.20), ("UPI", 0.50, 0.20, 0.05)):
        xs, red = _reduction(data, "store", link)
        rows.append(
            Row(
                FIG,
                f"(a) time reduction vs SO at 4 KB stores ({link})",
                paper_store,
                text(
                    SECTION, f"achieving 63% and 50% lower execution time over CXL and UPI ({link}: {paper_store:.0%})"
                ),
                _at(xs, red, 4096),
                Tolerance(),
                "SO's Release waits at the core for every earlier store's ack: one round trip per Release that "
                "CORD does not pay; the round trip is a larger share of an epoch when larger stores move its 4 KB "
                "faster.",
                if_disagrees=MAGNITUDE,
            )
        )
        rows.append(
            Row(
                FIG,
                f"(a) CORD's benefit over SO rises with store size ({link})",
                None,
                text(SECTION, "CORD's performance improvements over SO keep increasing"),
                red[-1],
                monotone(xs, red, what="CORD's time reduction vs SO"),
                "Larger stores carry the same bytes in fewer messages (fewer headers), so an epoch's transmission "
                "shrinks while SO's per-Release round trip stays.",
            )
        )
        _, saving = _reduction(data, "store", link, "traffic_norm")
        rows.append(
            Row(
                FIG,
                f"(a) traffic saving vs SO falls with store size ({link})",
                None,
                text(SECTION, "CORD's traffic reduction decreases with larger Relaxed store granularities"),
                saving[-1],
                monotone(xs, saving, increasing=False, what="traffic saving"),
                "SO's saving is its per-store ack (a 16 B message): a smaller share of the traffic as stores grow.",
            )
        )
        at1k = _at(xs, saving, 1024)
        rows.append(
            Row(
                FIG,
                f"(a) traffic saving vs SO at 1 KB stores, below 10 % ({link})",
                0.10,
                text(SECTION, "reducing to < 10% for 1KB stores"),
                at1k,
                Predicate("< 10 %", at1k < 0.10, f"{at1k:.4f}"),
                "At 1 KB a store's message is 1040 B and SO's ack 16 B: the ack is a small share of SO's traffic.",
                if_disagrees=ACK_SIZE,
            )
        )
        over = {
            f"{panel} {x}": 1 / v - 1
            for panel in ("store", "sync")
            for x, v in zip(_pick(data, panel, link, "mp")["x"], _pick(data, panel, link, "mp")["time_norm"])
        }
        extra = {
            f"{panel} {x}": 1 / v - 1
            for panel in ("store", "sync")
            for x, v in zip(_pick(data, panel, link, "mp")["x"], _pick(data, panel, link, "mp")["traffic_norm"])
        }
        worst = max(over.values())
        notis = float(sum(_pick(data, p, link, "cord")["req_notis"].sum() for p in ("store", "sync")))
        rows.append(
            Row(
                FIG,
                f"(a, b) CORD's time ÷ MP's − 1 at fanout 1, worst point ({link})",
                0.0,
                text(SECTION, "CORD observes no performance or traffic overheads compared to message passing"),
                worst,
                all_of(
                    "time and traffic within 10 % of MP at every store size and granularity, and no notification sent",
                    {
                        "time": Predicate("≤ 10 %", worst <= 0.10, ", ".join(f"{k}: {v:.3f}" for k, v in over.items())),
                        "traffic": Predicate(
                            "≤ 10 %",
                            max(extra.values()) <= 0.10,
                            ", ".join(f"{k}: {v:.3f}" for k, v in extra.items()),
                        ),
                        "no-noti": Predicate("no ReqNoti", notis == 0, f"{notis:g} ReqNotis"),
                    },
                ),
                "At fanout 1 every store of an epoch and its Release go to one directory: the Release commits when "
                "its counter matches, nothing waits for a notification, and the core does not stall while fewer "
                "than 8 epochs (Table 3's unacked-epoch table) are unacked; CORD's only extra message is one "
                "RelAck per Release.",
                if_disagrees=TABLE_BOUND,
            )
        )
        xs, red = _reduction(data, "sync", link)
        at256 = _at(xs, red, 256 * KIB)
        rows.append(
            Row(
                FIG,
                f"(b) benefit over SO falls with bytes per Release, < 20 % at 256 KB ({link})",
                0.20,
                text(
                    SECTION, "CORD's performance benefits over SO decrease, dropping to < 20% over CXL and UPI at 256KB"
                ),
                at256,
                all_of(
                    "reduction falls with the synchronization granularity and is below 20 % at 256 KB",
                    {
                        "falls": monotone(xs, red, increasing=False, what="time reduction"),
                        "small": Predicate("< 20 %", at256 < 0.20, f"{at256:.3f}"),
                    },
                ),
                "Transmission of an epoch's bytes grows with the granularity while SO's extra round trip per "
                "Release does not.",
                if_disagrees=SYNC,
            )
        )
        _, saving = _reduction(data, "sync", link, "traffic_norm")
        coarse = [(x, s_) for x, s_ in zip(xs, saving) if x >= 4 * KIB]
        rows.append(
            Row(
                FIG,
                f"(b) traffic saving vs SO lower at 64 B per Release, then constant ({link})",
                None,
                text(
                    SECTION,
                    "first increases slightly with fine-grained synchronization (i.e., 64B), then remains constant",
                ),
                saving[-1],
                all_of(
                    "saving at 64 B below the saving at every coarser granularity, and flat (within 10 %) from 4 KB",
                    {
                        "rises": Predicate(
                            "64 B lowest",
                            all(saving[0] < v for v in saving[1:]),
                            ", ".join(f"{x}: {v:.3f}" for x, v in zip(xs, saving)),
                        ),
                        "flat": flat([x for x, _ in coarse], [v for _, v in coarse], 0.10, what="traffic saving"),
                    },
                ),
                "With one store per Release, CORD keeps the Release's ack: its saving is SO's acks of the Relaxed "
                "stores only, a smaller share; with many stores per Release the traffic is the stores and SO's "
                "one ack per store.",
            )
        )
        rows.append(
            Row(
                FIG,
                f"(b) traffic saving vs SO at 256 KB per Release ({link})",
                0.20,
                text(SECTION, "then remains constant at 20% with larger synchronization granularities"),
                _at(xs, saving, 256 * KIB),
                Tolerance(),
                "With many stores per Release the traffic is the stores; SO adds one ack per store.",
            )
        )
        xs, red = _reduction(data, "fanout", link)
        rows.append(
            Row(
                FIG,
                f"(c) CORD's benefit over SO falls with fanout and stays positive ({link})",
                None,
                text(SECTION, "CORD observes a decreasing but significant performance benefit"),
                min(red),
                all_of(
                    "CORD's time reduction vs SO falls with the fanout and is above 0 at every fanout",
                    {
                        "falls": monotone(xs, red, increasing=False, what="time reduction"),
                        "positive": Predicate("> 0", min(red) > 0, f"smallest {min(red):.3f}"),
                    },
                ),
                "At a higher fanout each CORD Release waits for notifications from more pending directories, "
                "which delays its commit; SO still pays a round trip per Release.",
            )
        )
        at7 = _at(xs, red, 7)
        rows.append(
            Row(
                FIG,
                f"(c) time reduction vs SO at fanout 7 ({link})",
                paper_fan,
                text(SECTION, "> 25% and > 20% over CXL and UPI at 7 hosts"),
                at7,
                Predicate(f"> {paper_fan:.0%}", at7 > paper_fan, f"{at7:.3f}"),
                "SO still pays a round trip per Release; CORD's Release waits for notifications from the other "
                "pending directories instead, which delays its commit but not the core.",
                if_disagrees=FANOUT_SO,
            )
        )
        mp = _pick(data, "fanout", link, "mp")
        over = 1 / float(mp[mp["x"] == 7]["time_norm"].iloc[0]) - 1 if 7 in list(mp["x"]) else float("nan")
        rows.append(
            Row(
                FIG,
                f"(c) CORD's time ÷ MP's − 1 at fanout 7 ({link})",
                paper_mp,
                text(SECTION, "Over CXL, CORD observes 20% performance overheads compared to MP at 7 hosts")
                if link == "CXL"
                else text(SECTION, "it observes < 5% performance overheads compared to MP over UPI"),
                over,
                Tolerance() if link == "CXL" else Predicate("< 5 %", over < 0.05, f"{over:.3f}"),
                "A Release to one host commits only after each other pending host's directory notifies it, and "
                "that directory notifies only after its own previous Release committed: one host-to-host crossing "
                "per epoch on the critical path, which MP never waits for.",
                if_disagrees=FANOUT_MP,
            )
        )
        extra7 = 1 / float(mp[mp["x"] == 7]["traffic_norm"].iloc[0]) - 1 if 7 in list(mp["x"]) else float("nan")
        rows.append(
            Row(
                FIG,
                f"(c) CORD's traffic ÷ MP's − 1 at fanout 7 ({link})",
                0.05,
                # "~ 5%": to the whole percent
                text(SECTION, "CORD observes ~ 5% traffic overhead compared to MP", precision=0.005),
                extra7,
                Tolerance(),
                "CORD's extra messages over MP at fanout 7: per Release 6 notification requests, 6 notifications "
                "and a RelAck, against the epoch's 64 stores of 80 B.",
                if_disagrees=FANOUT_TRAFFIC,
            )
        )
    return rows


CORES = CORE_GAP

ACK_SIZE = (
    "Measured: at 1 KB a store is one 1040 B message and SO's ack 16 B, so SO sends 1.4 % more than CORD, "
    "7x under the paper's '< 10 %' (the report takes a stated bound as the paper's number). The paper's "
    "saving at 1 KB, near its bound, means its acks weigh far more against a 1 KB store than fabricsim's "
    "16 B ack; the paper gives no packet or flit format (fabricsim's 16 B header and ack are choices). The "
    "direction holds (the row above)."
)

SYNC = (
    "Measured: the direction holds and fabricsim's benefit at 256 KB is well under the paper's bound (6 % on "
    "CXL, 2 % on UPI): a 64 GB/s link moves 256 KB in 4 µs against SO's one ~330 ns round trip per Release, "
    "so the round trip is a small share; the paper's value under its '< 20 %' bound is not stated, and its "
    "slower core stretches each epoch's issue as well. " + CORES
)

FANOUT_SO = (
    "Measured: the direction holds and CORD's lead at fanout 7 is 2.4x (CXL) and 2.9x (UPI) the paper's bound: "
    "the stand-in core sends an epoch's 64 stores in ~80 ns, so SO's round trip per Release (~330 ns on CXL) "
    "is most of each epoch; the paper's gem5 core spends longer per epoch (the same cause makes (a)'s 4 KB "
    "reduction larger than the paper's). " + CORES
)

FANOUT_TRAFFIC = (
    "Measured: per 4 KB epoch at fanout 7, CORD sends 6 notification requests, 6 notifications and a RelAck "
    "on top of MP's 64 stores of 80 B; the paper's message sizes are not given (fabricsim's are in the notes)."
)

MAGNITUDE = (
    "The direction holds; the size differs. In this model the core issues a 64 B store per cycle and a 4 KB "
    "epoch takes ~80 ns on a 64 GB/s link, while SO's round trip host to host is ~330 ns, so SO loses most of "
    "each epoch. The paper's gem5 cores spend far longer per epoch (their 63 % at 4 KB stores implies an epoch "
    "of about half a round trip even with 4 KB stores), for costs of the core, caches and packetization the "
    "paper does not give; the issue-rate choice in the robustness table moves the number towards the paper's."
)

TABLE_BOUND = (
    "Measured: where an epoch is short (one 4 KB store, or 64 B per Release) CORD is bounded by Table 3's "
    "8-entry unacked-epoch table: at most 8 Releases per round trip (the round trip of a 4 KB store is "
    "longer still, store-and-forward at each hop), while MP never waits. The paper's slower cores make "
    "epochs long enough for 8 to cover a round trip (the issue-rate choice in the robustness table)."
)

FANOUT_MP = (
    "Measured: each epoch's Release waits for the previous Release at the other host to commit and notify "
    "(one 150 ns crossing on CXL) while an epoch's 4 KB takes only ~80 ns to send, so CORD runs at one epoch "
    "per crossing; on UPI (50 ns) the crossing hides behind transmission. The paper's longer epochs (see the "
    "time-reduction rows) would hide more of it. The ordering CXL > UPI holds."
)


MUTANTS = [
    Mutant(
        "one-unacked-epoch",
        "CORD's unacked-epoch table holds one entry: each Release waits for the previous one's ack, as SO's does",
        set={"protocol.cord.proc_unacked": 1},
        flips=[
            "(c) CORD's benefit over SO falls with fanout and stays positive (CXL)",
            "(c) CORD's time ÷ MP's − 1 at fanout 7 (UPI)",
        ],
    ),
]

#: the core's issue rate: a choice the paper does not make (Figs 8, 9 and 10 share the core)
ISSUE_CHOICE = Choice(
    "core store issue rate",
    "the gem5-o3-2ghz preset: up to 8 operations a 0.5 ns cycle, no in-order issue stage",
    [
        Variant(
            "one per 0.5 ns",
            "the stand-in before the preset: one operation per cycle",
            set={"protocol.issue_interval": "0.5ns"},
        ),
        Variant("one per 4 ns", "a write-through store every 8 cycles", set={"protocol.issue_interval": "4ns"}),
    ],
)

CHOICES = [
    ISSUE_CHOICE,
    Choice(
        "Table 1's 150 ns CXL latency",
        "one host-to-host crossing (75 ns per uplink)",
        [
            Variant(
                "a round trip",
                "150 ns host to host and back (37.5 ns per uplink)",
                set={"defaults.link.latency": "37.5ns"},
                when=lambda labels: labels.get("link") == "CXL",
            )
        ],
    ),
    Choice(
        "default synchronization granularity",
        "4 KB per Release (the caption's)",
        [
            Variant(
                "2 MB per Release",
                "the text's default, 2 MB per Release, on the store-size and fanout panels",
                set_per_point=lambda labels: _sync_2mb(labels),
                when=lambda labels: labels.get("panel") in ("store", "fanout"),
            )
        ],
    ),
]


def _sync_2mb(labels) -> dict:
    """A store-size or fanout point with the text's 2 MB per Release."""
    store = labels["x"] if labels["panel"] == "store" else DEFAULTS["store_size"]
    sync = 2048 * KIB
    return {"workload.remote_stores.release_every": f"{sync}B", "workload.requests": _requests(store, sync, True)}


EXPERIMENT = Experiment(
    seed="cord",
    figure="fig08",
    title="CORD Fig 8: store size, synchronization granularity and fanout",
    sweep=sweep,
    analyze=analyze,
    plot=plot,
    compare=compare,
    notes=NOTES,
    mutants=MUTANTS,
    choices=CHOICES,
)
