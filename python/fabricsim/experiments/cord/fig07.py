"""CORD Fig 7: execution time (top) and inter-host traffic (bottom) of SO,
MP and WB normalised to CORD's, for Table 2's applications over CXL and
UPI, under release consistency.

The paper (§5.2): CORD outperforms SO by over 28 % (CXL) and 20 % (UPI) on
average, most for the communication-heavy DOE traces; it reduces traffic
against SO by over 11 % / 16 % (PR by 59 %), except for TRNS and MOCFE;
against MP it costs less than 4 % / 2 % time and 7 % / 5 % traffic; WB is
slower than CORD for every app but PR and sends more traffic for every app
but SSSP."""

from __future__ import annotations

import pandas as pd

from .. import Experiment
from ..variants import Choice, Mutant, Variant
from ..verdicts import Predicate, Row, Tolerance, all_of, text
from . import apps

FIG = "CORD Fig 7"
SECTION = "§5.2, End-to-end Workloads"
DOE = ["MOCFE", "CMC-2D", "BigFFT", "CR"]

NOTES = (
    apps.__doc__
    + """
System: CORD's Table 1 (see Fig 8's notes), all 64 cores sending; 20 epochs
per core (--quick: 6). Execution time is the simulated time until every
message is handled; traffic the bytes crossing the hosts' uplinks. Averages
are geometric means over the applications (MP: without TQH). WB is the
MESI directory protocol on the same system (see the system's notes in
system.py: Table 1's L2 as each core's cache, 16 misses outstanding, a
128 MiB footprint); its Releases wait at the core for every earlier
store's ownership, and its receivers' loads fetch the lines from the
writer's cache.
"""
)


def sweep(quick: bool):
    return apps.sweep("cord/fig07", "rc", 6 if quick else 20, variants=apps.ALL_VARIANTS)


def analyze(df: pd.DataFrame) -> pd.DataFrame:
    return apps.analyze(df)


def plot(data: pd.DataFrame, fig) -> None:
    apps.plot(data, fig, "CORD Fig 7: Table 2 stand-ins under RC, normalised to CORD")


def compare(data: pd.DataFrame) -> list[Row]:
    rows = []
    for link, speed, saving, mp_time, mp_traffic in (("CXL", 1.28, 0.11, 0.04, 0.07), ("UPI", 1.20, 0.16, 0.02, 0.05)):
        so_t, so_b, mp_t, mp_b = apps.so_mp_ratios(data, link)
        rows.append(
            Row(
                FIG,
                f"SO's time ÷ CORD's, mean over apps ({link})",
                speed,
                text(SECTION, f"CORD outperforms SO by over {speed - 1:.0%} on average"),
                apps.geomean(so_t.values()),
                Tolerance(),
                "SO's Releases wait at the core for every earlier store's ack (a round trip between hosts); "
                "CORD's core sends the Release at once and the directory orders it.",
                if_disagrees=SO_GAP,
            )
        )
        faster = [a for a, v in so_t.items() if v > 1.0]
        doe = apps.geomean(so_t[a] for a in DOE)
        rest = apps.geomean(v for a, v in so_t.items() if a not in DOE)
        rows.append(
            Row(
                FIG,
                f"CORD faster than SO for most apps, most for the DOE traces ({link})",
                None,
                text(SECTION, "CORD observes significant performance benefits for the DOE workloads"),
                doe,
                all_of(
                    "CORD faster for at least 8 of 10 apps, and the DOE traces' mean benefit above the others'",
                    {
                        "most": Predicate("≥ 8 apps", len(faster) >= 8, f"{len(faster)} apps: {', '.join(faster)}"),
                        "doe": Predicate("DOE > others", doe > rest, f"DOE {doe:.2f}, others {rest:.2f}"),
                    },
                ),
                "The DOE stand-ins compute 100 ns per epoch against the others' 300 ns: the round trip SO waits "
                "for per Release is a larger share of their time.",
            )
        )
        red = 1 - 1 / apps.geomean(so_b.values())
        rows.append(
            Row(
                FIG,
                f"traffic reduction vs SO, mean over apps ({link})",
                saving,
                text(SECTION, f"CORD reduces traffic compared to SO by over {saving:.0%}"),
                red,
                Tolerance(),
                "SO acks every Relaxed store (a 16 B message per store); CORD acks only Releases but adds "
                "notification requests and notifications when an epoch writes to several hosts.",
            )
        )
        more = sorted(a for a, v in so_b.items() if v < 1.0)
        rows.append(
            Row(
                FIG,
                f"TRNS and MOCFE: CORD sends more traffic than SO ({link})",
                None,
                text(SECTION, "TRNS and MOCFE are the only workloads for which CORD generates more traffic than SO"),
                float(len(more)),
                Predicate(
                    "TRNS and MOCFE among the apps where CORD's traffic exceeds SO's",
                    {"TRNS", "MOCFE"} <= set(more),
                    f"CORD above SO for {', '.join(more) or 'none'}",
                ),
                "Fine synchronization with fanout 7: each Release sends 6 notification requests and draws 6 "
                "notifications, more than the few per-store acks SO sends for an epoch of 8 stores.",
                if_disagrees="" if {"TRNS", "MOCFE"} <= set(more) else "",
            )
        )
        pr = 1 - 1 / so_b["PR"]
        rows.append(
            Row(
                FIG,
                f"PR's traffic reduction vs SO ({link})",
                0.59,
                text(SECTION, "59% less traffic for PR"),
                pr,
                Tolerance(),
                "PR stores words: SO's 16 B ack per 8 B store is most of a 24 B store message's size.",
            )
        )
        over = apps.geomean(1 / v for v in mp_t.values()) - 1
        rows.append(
            Row(
                FIG,
                f"CORD's time ÷ MP's − 1, mean over apps ({link})",
                mp_time,
                text(SECTION, f"less than {mp_time:.0%} average performance overheads"),
                over,
                Predicate(f"≤ {mp_time:.0%} + 5 points", over <= mp_time + 0.05, f"{over:.3f}"),
                "MP never waits; CORD waits only when its 8-entry unacked-epoch table fills or a Release's "
                "notifications arrive late.",
                if_disagrees=MP_GAP,
            )
        )
        extra = apps.geomean(1 / v for v in mp_b.values()) - 1
        rows.append(
            Row(
                FIG,
                f"CORD's traffic ÷ MP's − 1, mean over apps ({link})",
                mp_traffic,
                text(SECTION, f"CORD incurs {mp_traffic:.0%} additional traffic on average"),
                extra,
                Tolerance(),
                "CORD's extra messages over MP: one RelAck per Release, and the notification requests and "
                "notifications of epochs that write to several hosts.",
                if_disagrees=MP_TRAFFIC,
            )
        )
        wb_t = apps.ratios(data, link, "wb", "time_norm")
        wb_b = apps.ratios(data, link, "wb", "traffic_norm")
        slower = sorted(a for a, v in wb_t.items() if v > 1.0)
        rows.append(
            Row(
                FIG,
                f"WB slower than CORD for every app but PR ({link})",
                None,
                text(SECTION, "WB observes lower performance than CORD for all workloads except for PR"),
                float(len(slower)),
                Predicate(
                    "WB slower for at least 9 of 10 apps (all but PR in the paper)",
                    len(slower) >= 9,
                    f"WB slower for {len(slower)} apps; not for "
                    f"{', '.join(a for a in wb_t if a not in slower) or 'none'}",
                ),
                "WB's store misses fetch ownership from the home in the receiver's host, a Release waits for "
                "them, and the receiver's loads take the lines back from the writer's cache: two host "
                "crossings per line where write-through pays one posted store."
                + (" " + WB_PR if "PR" in slower else ""),
            )
        )
        heavier = sorted(a for a, v in wb_b.items() if v > 1.0)
        rows.append(
            Row(
                FIG,
                f"WB sends more traffic than CORD for every app but SSSP ({link})",
                None,
                text(SECTION, "WB generates significantly more traffic than CORD for all workloads except for SSSP"),
                apps.geomean(wb_b.values()),
                Predicate(
                    "WB above CORD for at least 9 of 10 apps (all but SSSP in the paper)",
                    len(heavier) >= 9,
                    f"WB above CORD for {len(heavier)} apps; not for "
                    f"{', '.join(a for a in wb_b if a not in heavier) or 'none'}",
                ),
                "Per line WB moves a request, the line to the writer, a forward and the line to the reader "
                "(and a copy back to the home) across hosts; CORD moves the stores' bytes once, plus its "
                "few acks and notifications." + (" " + WB_SSSP if "SSSP" in heavier else ""),
            )
        )
    return rows


WB_PR = (
    "Unlike the paper, WB is slower than CORD for PR too. The paper credits PR's exception to moderate data locality "
    "(a line written again before the reader takes it); the stand-in writes fresh lines every epoch, so WB "
    "only coalesces PR's word stores into lines and still pays an ownership miss per line."
)

WB_SSSP = (
    "Unlike the paper, WB sends more traffic than CORD for SSSP too. The paper credits SSSP's exception to data reuse "
    "in its input graph, which the stand-in (fresh lines every epoch) does not have."
)

SO_GAP = (
    "Measured: the direction holds and the gap is larger. The stand-ins' epochs are short (100-300 ns of "
    "computation, a few stores), so SO's round trip per Release (~330 ns on CXL) is a large share of each; the "
    "paper's applications spend more time per Release (their compute/communication ratios are not given; the "
    "robustness table's 'twice' alternative shows the gap shrinking as computation grows)."
)

MP_GAP = (
    "Measured: the fine-grained, communication-heavy stand-ins (MOCFE, CMC-2D, CR: an epoch of a few stores "
    "every 100 ns) issue Releases faster than 8 per round trip, so CORD's 8-entry unacked-epoch table (Table "
    "3) stalls the core, and with fanout 7 each Release also waits for a notification crossing between hosts. "
    "The paper's applications spend longer per epoch (their compute/communication ratio is not given; the "
    "compute choice in the robustness table shows the dependence)."
)

MP_TRAFFIC = (
    "Measured: the stand-ins with fanout 7 and a few stores per Release (MOCFE, CMC-2D, TRNS) send 6 "
    "notification requests, 6 notifications and a RelAck per epoch of 2-8 stores; the paper's averages come "
    "from applications whose epochs (and compute/communication ratios) we do not know. The apps with coarse "
    "epochs (PR, BigFFT) stay within a few percent of MP."
)

MUTANTS = [
    Mutant(
        "source-ordered-cord",
        "CORD's runs source-order their stores (every store acked, a Release waits for the acks): the "
        "directory ordering is gone",
        set={"protocol.cord.variant": "so"},
        when=lambda labels: labels.get("variant") == "cord",
        flips=[
            "CORD faster than SO for most apps, most for the DOE traces (CXL)",
            "traffic reduction vs SO, mean over apps (CXL)",
        ],
    ),
]

CHOICES = [
    Choice(
        "computation per epoch",
        "100 ns (DOE), 300 ns (others)",
        [
            Variant(
                "twice",
                "200 ns (DOE), 600 ns (others)",
                set_per_point=lambda labels: {"workload.compute": f"{2 * apps.APPS[labels['app']][4]}ns"},
            ),
            Variant(
                "half",
                "50 ns (DOE), 150 ns (others)",
                set_per_point=lambda labels: {"workload.compute": f"{apps.APPS[labels['app']][4] // 2}ns"},
            ),
        ],
    ),
]

EXPERIMENT = Experiment(
    seed="cord",
    figure="fig07",
    title="CORD Fig 7: applications under release consistency",
    sweep=sweep,
    analyze=analyze,
    plot=plot,
    compare=compare,
    notes=NOTES,
    mutants=MUTANTS,
    choices=CHOICES,
)
