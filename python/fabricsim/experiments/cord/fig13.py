"""CORD Fig 13: execution time (top) and inter-host traffic (bottom) under
TSO, SO, MP and WB normalised to CORD's, for Table 2's applications over
CXL and UPI.

The paper (§6): under TSO CORD outperforms SO by over 102 % (CXL) and 73 %
(UPI) on average, but sends more traffic than SO (+8 % / +6 %) for all
apps but SSSP and PAD, since every store is now acked; it comes within 3 %
of MP's time (compared with fabricsim's MP, which never waits: the bound the
paper's MP stands for); for PR, MP sends only 24 % / 32 % of CORD's traffic."""

from __future__ import annotations

import pandas as pd

from .. import Experiment
from ..variants import Mutant
from ..verdicts import Predicate, Row, Tolerance, all_but, text
from . import apps

FIG = "CORD Fig 13"
SECTION = "§6, CORD for TSO"

NOTES = (
    apps.__doc__
    + """
TSO as §6 has it: every core has a FIFO store buffer (16 entries); SO sends
a store only when the previous one is acked; CORD orders every store with
its Release mechanism (each is acked, each needs the notifications of the
other pending directories); MP keeps its point-to-point ordering (the
paper's MP totally orders all transactions as "an upper bound"; that
variant is not modelled, so MP never waits here: CORD's time is compared
with it as that bound (MP_TSO says what the comparison can show); MP's
traffic is too, since the paper's MP sends no acks either); WB's cores (MESI, as in Fig 7) put the same
16-entry FIFO store buffer in front of their cache: stores perform one at
a time in order, loads pass them. The paper's only result for WB under TSO
is that it sends more traffic than MP. 3 epochs per core
(--quick: 2): every store waits, so runs are long in simulated time.
Averages are geometric means over the applications (MP: without TQH).
Execution time as Fig 7's (the last core's finish; apps.TIME_CHOICE).
"""
)


def sweep(quick: bool):
    return apps.sweep("cord/fig13", "tso", 2 if quick else 3, variants=apps.ALL_VARIANTS)


def analyze(df: pd.DataFrame) -> pd.DataFrame:
    return apps.analyze(df)


def plot(data: pd.DataFrame, fig) -> None:
    apps.plot(data, fig, "CORD Fig 13: Table 2 stand-ins under TSO, normalised to CORD")


def compare(data: pd.DataFrame) -> list[Row]:
    rows = []
    for link, speed, extra, pr_mp in (("CXL", 2.02, 0.08, 0.24), ("UPI", 1.73, 0.06, 0.32)):
        so_t, so_b, mp_t, mp_b = apps.so_mp_ratios(data, link)
        rows.append(
            Row(
                FIG,
                f"TSO: SO's time ÷ CORD's, mean over apps ({link})",
                speed,
                text(
                    SECTION,
                    "with CXL, CORD outperforms SO by over 102% on average, and with UPI, CORD outperforms SO by "
                    "over 73%",
                ),
                apps.geomean(so_t.values()),
                Tolerance(),
                "Under TSO SO sends each store only after the previous one's ack, a round trip per store; "
                "CORD sends every store at once and the directories order them, up to 8 unacked per core.",
                if_disagrees=TSO_GAP,
            )
        )
        faster = [a for a, v in so_t.items() if v > 1.0]
        rows.append(
            Row(
                FIG,
                f"TSO: CORD faster than SO for most apps ({link})",
                None,
                text(SECTION, "under TSO, CORD outperforms SO across most workloads"),
                float(len(faster)),
                Predicate(
                    "CORD faster for at least 8 of 10 apps",
                    len(faster) >= 8,
                    ", ".join(f"{a}: {v:.2f}" for a, v in so_t.items()),
                ),
                "SO's per-store round trip under TSO is on every app's critical path; CORD keeps up to 8 "
                "stores (Releases) unacked.",
            )
        )
        rows.append(
            Row(
                FIG,
                f"TSO: CORD sends more traffic than SO for every app but SSSP and PAD ({link})",
                None,
                text(SECTION, "CORD observes higher traffic than SO except for SSSP and PAD"),
                float(sum(v < 1.0 for v in so_b.values())),
                all_but(so_b, lambda v: v < 1.0, ["SSSP", "PAD"], "SO ÷ CORD traffic < 1"),
                "Every store is now acked under both; CORD adds its notification requests and notifications "
                "(every store is a Release) and the store counter on each.",
                if_disagrees=NOTI_TRAFFIC,
            )
        )
        more = apps.geomean(1 / v for v in so_b.values()) - 1
        rows.append(
            Row(
                FIG,
                f"TSO: CORD's traffic ÷ SO's − 1, mean over apps ({link})",
                extra,
                # whole percents
                text("Fig 13 caption", "inflates SO traffic by 8% and 6% for CXL and UPI", precision=0.005),
                more,
                Tolerance(),
                "The acks cost the same under both; the difference is CORD's notifications.",
                if_disagrees=NOTI_TRAFFIC,
            )
        )
        over = apps.geomean(1 / v for v in mp_t.values()) - 1
        rows.append(
            Row(
                FIG,
                f"TSO: CORD's time ÷ MP's − 1, mean over apps ({link})",
                0.03,
                # "3%": a whole percent as the paper writes it (docs/reproductions.md)
                text("Fig 13 caption", "3% and 3% close to MP performance for CXL and UPI", precision=0.005),
                over,
                Tolerance(),
                "MP's time is the bound the paper compares against.",
                if_disagrees=MP_TSO,
            )
        )
        versus = {
            v.upper(): apps.geomean(apps.ratios(data, link, v, "traffic_norm")[a] / mp_b[a] for a in mp_b)
            for v in ("cord", "so", "wb")
        }
        rows.append(
            Row(
                FIG,
                f"TSO: CORD, SO and WB send more traffic than MP, mean over apps ({link})",
                None,
                text(SECTION, "CORD, SO and WB observe higher traffic overhead over MP"),
                versus["CORD"],
                Predicate(
                    "each one's traffic ÷ MP's > 1 (mean over the apps MP runs)",
                    all(v > 1.0 for v in versus.values()),
                    ", ".join(f"{k}: {v:.2f}" for k, v in versus.items()),
                ),
                "MP's point-to-point ordering sends no acks; the others ack every store under TSO.",
            )
        )
        rows.append(
            Row(
                FIG,
                f"TSO: PR's traffic under MP ÷ CORD's ({link})",
                pr_mp,
                text(SECTION, "for PR, MP incurs only 24% and 32% of the traffic incurred by CORD with CXL and UPI"),
                float(mp_b["PR"]),
                Tolerance(),
                "PR's word stores: under TSO CORD acks each and sends notifications for each to the other "
                "pending directories (fanout 7); MP sends the stores alone.",
                if_disagrees=NOTI_TRAFFIC,
            )
        )
    return rows


TSO_GAP = (
    "Measured: CORD's lead is larger than the paper's on both links (3.8x and 3.2x SO's time against 2.02x "
    "and 1.73x): with "
    "8 unacked Releases per core CORD keeps 8 stores in flight where SO keeps one, and the stand-ins' short "
    "epochs leave little computation to hide SO's round trips; the shorter UPI crossing shortens CORD's "
    "notification chain more than it shortens SO's per-store wait. Part of the gap is the core, not CORD: "
    "gem5's O3 defaults running stand-in loops with no computation between stores, so SO's per-store round "
    "trip is nearly all of their time."
)

MP_TSO = (
    "The paper's MP under TSO totally orders all PCIe transactions (§6); fabricsim's MP keeps its point-to-point "
    "ordering under TSO and never waits (no totally ordered MP is modelled), so it is a lower bound on time, not "
    "the paper's comparable protocol. The traffic rows against MP are not affected: the paper's MP sends no acks "
    "either."
)

NOTI_TRAFFIC = (
    "Measured: with every store a Release and fanout 7, a store finds up to 6 other directories with unacked "
    "Releases of its core (pending), so it sends up to 6 notification requests and draws 6 notifications: "
    "about 12 control messages per store against SO's one ack. Fewer Releases are unacked at once in the "
    "paper's slower cores, so fewer directories are pending per store; the paper does not give the rates."
)

MUTANTS = [
    Mutant(
        "one-unacked-epoch",
        "CORD's unacked-epoch table holds one entry: under TSO each store waits for the previous one's ack, as "
        "under SO",
        set={"protocol.cord.proc_unacked": 1},
        when=lambda labels: labels.get("variant") != "wb",
        flips=["TSO: CORD faster than SO for most apps (CXL)"],
    ),
]

EXPERIMENT = Experiment(
    seed="cord",
    figure="fig13",
    title="CORD Fig 13: applications under TSO",
    sweep=sweep,
    analyze=analyze,
    plot=plot,
    compare=compare,
    notes=NOTES,
    mutants=MUTANTS,
    choices=[apps.COMPUTE_CHOICE, apps.TIME_CHOICE],
)
