"""CORD Fig 11: storage CORD's tables need at the processor and at the
directory against the number of hosts, for SSSP, PAD, PR and ATA, over
CXL and UPI.

The paper (§5.4): the processor needs less than 40 B for every workload and
grows sub-linearly with hosts; the directory grows with hosts, and ATA, the
most storage-hungry, needs less than 1.5 KB (CXL) and about 1.2 KB (UPI)
at 8 hosts. The storage shown is "the smallest amount of storage required
to ensure no performance degradation"."""

from __future__ import annotations

import pandas as pd

from ...sweeps import Sweep
from .. import Experiment
from ..plots import figure_legend
from ..variants import Choice, Mutant, Variant
from ..verdicts import Predicate, Row, Tolerance, all_of, only, proportional, text
from . import apps, system
from .system import table1

FIG = "CORD Fig 11"
SECTION = "§5.4, Storage"
WORKLOADS = ["SSSP", "PAD", "PR", "ATA"]
#: epochs per core: enough for the tables to reach their steady state
EPOCHS = 16
LINKS = ["CXL", "UPI"]
#: tables large enough never to stall, so their high-water marks are the storage needed
UNBOUNDED = {
    "protocol.cord.proc_unacked": 255,
    "protocol.cord.proc_counters": 4096,
    "protocol.cord.dir_counters": 4096,
    "protocol.cord.dir_notis": 4096,
}
#: CORD's tables, by their statistics' names
TABLES = ["proc_counters", "proc_unacked", "dir_counters", "dir_notis", "dir_held"]
#: bytes per entry (fabricsim's choice; the paper gives entry counts, not layouts)
ENTRY = {
    "proc_counter": 5,  # directory id (1 B) + 32-bit store counter
    "proc_unacked": 2,  # 8-bit epoch + directory id
    "dir_counter": 6,  # core id + 8-bit epoch + 32-bit store counter
    "dir_noti": 3,  # core id + 8-bit epoch + 8-bit notification count
    "dir_largest": 1,  # 8-bit largest committed epoch, per core
    "dir_held": 20,  # a recycled Release: 16 B message + 4 B store counter
}

NOTES = (
    apps.__doc__
    + """
ATA (the paper's continuous MPI alltoall of 8 B): every core stores 8 B to
each other host (fanout = hosts - 1) and releases, with 100 ns of
computation per round (the DOE stand-ins' value). A stand-in's fanout is
capped at hosts - 1. 16 epochs per core (--quick too); hosts 2, 4 and 8
(--quick: 2 and 8), each host the Table 1 host (8 cores, 8 slices).

Storage is measured as the high-water marks of CORD's tables with tables
large enough never to stall the core (so the marks are the storage needed
for no performance loss, the paper's definition), times bytes per entry
chosen here (ENTRY: a processor store counter 5 B, an unacked epoch 2 B; a
directory store counter 6 B, a notification counter 3 B, the largest
committed epoch 1 B per core, a recycled Release held in the directory's
buffer 20 B). Each table's mark is the largest over all processors (or
directories), so the sums are upper bounds.
"""
)


def _shape(workload: str, hosts: int) -> tuple[int, int, int, int]:
    """(store bytes, bytes per Release, fanout, compute ns)."""
    if workload == "ATA":
        return 8, 8 * (hosts - 1), hosts - 1, 100
    _, store, release, fanout, compute = apps.APPS[workload]
    return store, release, min(fanout, hosts - 1), compute


def sweep(quick: bool) -> Sweep:
    points = []
    for hosts in [2, 8] if quick else [2, 4, 8]:
        for link in LINKS:
            for w in WORKLOADS:
                store, release, fanout, compute = _shape(w, hosts)
                b = table1(link, hosts=hosts)
                b["name"] = f"cord-storage-{w.lower()}"
                points += system.points(
                    b,
                    "cord/fig11",
                    ["sim_time_ps", *(f"protocol.{t}_high" for t in TABLES), "outcome"],
                    {
                        **UNBOUNDED,
                        "workload.remote_stores.store_size": f"{store}B",
                        "workload.remote_stores.release_every": f"{release}B",
                        "workload.remote_stores.fanout": fanout,
                        "workload.remote_stores.compute": f"{compute}ns",
                        "workload.requests": EPOCHS * (max(1, release // store) + 1),
                    },
                    {"workload": w, "hosts": hosts, "link": link},
                    traffic=False,
                )
    return Sweep("cord/fig11", points)


def analyze(df: pd.DataFrame) -> pd.DataFrame:
    d = df.rename(columns={c: c.removeprefix("protocol.") for c in df.columns}).copy()
    cores = d["hosts"] * 8
    d["proc_counters_B"] = d["proc_counters_high"] * ENTRY["proc_counter"]
    d["proc_unacked_B"] = d["proc_unacked_high"] * ENTRY["proc_unacked"]
    d["dir_tables_B"] = (
        d["dir_counters_high"] * ENTRY["dir_counter"]
        + d["dir_notis_high"] * ENTRY["dir_noti"]
        + cores * ENTRY["dir_largest"]
    )
    d["dir_buffers_B"] = d["dir_held_high"] * ENTRY["dir_held"]
    d["processor_B"] = d["proc_counters_B"] + d["proc_unacked_B"]
    d["directory_B"] = d["dir_tables_B"] + d["dir_buffers_B"]
    d["order"] = d["workload"].map({w: i for i, w in enumerate(WORKLOADS)})
    d = d.sort_values(["link", "order", "hosts"]).drop(columns="order")
    cols = ["workload", "hosts", "link", "processor_B", "directory_B", "proc_counters_B", "proc_unacked_B"]
    return d[cols + ["dir_tables_B", "dir_buffers_B"]].reset_index(drop=True)


def plot(data: pd.DataFrame, fig) -> None:
    axes = fig.subplots(2, len(LINKS), squeeze=False)
    for c, link in enumerate(LINKS):
        for r, (col, what) in enumerate((("processor_B", "processor"), ("directory_B", "directory"))):
            ax = axes[r][c]
            for w in WORKLOADS:
                d = data[(data["link"] == link) & (data["workload"] == w)]
                ax.plot(d["hosts"], d[col], marker="o", label=w)
            ax.set_xlabel("CPU hosts")
            ax.set_ylabel(f"{link}: {what} storage (B)")
            ax.grid(True, alpha=0.3)
    figure_legend(fig)
    fig.suptitle("CORD Fig 11: storage needed for no stall, against hosts")


def _at(data: pd.DataFrame, link: str, w: str, col: str) -> dict[int, float]:
    d = data[(data["link"] == link) & (data["workload"] == w)]
    return dict(zip(d["hosts"], d[col]))


def _largest(values: dict[str, float]):
    top = max(values.values())
    return lambda v: v >= top


def compare(data: pd.DataFrame) -> list[Row]:
    rows = []
    for link, ata_dir in (("CXL", 1.5 * 1024), ("UPI", 1.2 * 1024)):
        proc = {w: _at(data, link, w, "processor_B") for w in WORKLOADS}
        dirs = {w: _at(data, link, w, "directory_B") for w in WORKLOADS}
        worst = max(max(v.values()) for v in proc.values())
        rows.append(
            Row(
                FIG,
                f"processor storage, largest over workloads and hosts ({link})",
                40.0,
                text(SECTION, "negligible (< 40B) for all workloads over CXL and UPI"),
                worst,
                Predicate("< 40 B", worst < 40, ", ".join(f"{w}: {max(v.values()):g}" for w, v in proc.items())),
                "A core keeps a store counter per directory it wrote this epoch and an entry per unacked "
                "Release: few directories per epoch, a few Releases per round trip.",
                if_disagrees=PROC_BYTES,
            )
        )
        ata = dirs["ATA"]
        hosts = sorted(ata)
        at8 = ata.get(8, float("nan"))
        if link == "CXL":
            check = Predicate("< 1.5 KB", at8 < ata_dir, f"{at8:g} B")
            source = text(SECTION, "ATA, only consumes < 1.5KB and ~ 1.2KB at 8 hosts for CXL and UPI")
        else:
            check = Tolerance()
            # "~ 1.2KB": to a tenth of a KB
            source = text(SECTION, "ATA, only consumes < 1.5KB and ~ 1.2KB at 8 hosts for CXL and UPI", precision=51.2)
        rows.append(
            Row(
                FIG,
                f"ATA's directory storage at 8 hosts ({link})",
                ata_dir,
                source,
                at8,
                check,
                "A directory keeps a store counter and a notification counter per (core, unacked epoch) that "
                "wrote to it, and holds Releases waiting for their notifications: ATA writes every host every "
                "epoch.",
                if_disagrees=ATA_UPI if link == "UPI" else "",
            )
        )
        most = {w: v[hosts[-1]] for w, v in dirs.items()}
        rows.append(
            Row(
                FIG,
                f"ATA the most storage-consuming workload at the directory, at {hosts[-1]} hosts ({link})",
                None,
                text(SECTION, "the most storage-consuming workload, ATA"),
                most["ATA"],
                only(most, _largest(most), ["ATA"], "the largest directory storage"),
                "ATA writes 8 B to every other host and releases at once: the most Releases per byte, each "
                "waiting for notifications from every other host's directory.",
                if_disagrees=PR_DIR,
            )
        )
        rows.append(
            Row(
                FIG,
                f"directory storage grows linearly with hosts, every workload ({link})",
                None,
                text(SECTION, "the directory storage overhead increases linearly with more CPU hosts"),
                at8 / ata[hosts[0]],
                all_of(
                    "every workload's directory storage grows in proportion to the hosts",
                    {w: proportional(hosts, [v[h] for h in hosts], 0.15, what=w) for w, v in dirs.items()},
                ),
                "A directory keeps per-core tables (the largest committed epoch of every core) and the counters of "
                "the cores that wrote to it: more hosts, more cores. The paper's caption and Fig 12 call the "
                "growth sub-linear (for ATA), so the paper's own words disagree for ATA.",
                if_disagrees=LINEAR,
            )
        )
        rows.append(
            Row(
                FIG,
                f"processor storage grows sub-linearly with hosts ({link})",
                None,
                text(SECTION, "the processor storage not only increases sub-linearly with CPU hosts"),
                max(v[hosts[-1]] / v[hosts[0]] for v in proc.values()),
                Predicate(
                    f"every workload's processor storage rises, by less than {hosts[-1] // hosts[0]}x",
                    all(v[hosts[0]] < v[hosts[-1]] < v[hosts[0]] * hosts[-1] / hosts[0] for v in proc.values()),
                    ", ".join(f"{w}: {v[hosts[0]]:g} → {v[hosts[-1]]:g}" for w, v in proc.items()),
                ),
                "A core's tables hold a store counter per directory its epoch wrote and an entry per unacked "
                "Release: they depend on its fanout and round trip, not on the number of hosts.",
                if_disagrees=SUBLINEAR,
            )
        )
    return rows


PR_DIR = (
    "Measured: PR's stand-in (5 KB of 8 B word stores per Release, fanout 7, 300 ns of computation) holds "
    "more recycled Releases at a directory than ATA (1740 B of buffers at 8 hosts against ATA's 840 B): each "
    "PR Release waits for notifications from 6 other directories, and those directories notify only after "
    "their own 640-store epochs' counts match. The paper's PR (olesnik input) is not available; its stand-in's "
    "epochs, one Release size and fanout 7, are choices."
)

LINEAR = (
    "Measured: from 2 to 8 hosts the stand-ins' fanout grows with the hosts (capped at hosts - 1: 1 -> 7), "
    "so at 2 hosts no Release is ever recycled (no notification) and the directories hold only their per-core "
    "entries; the growth counts the notification machinery switching on. The paper is not consistent here: "
    "its Fig 11 caption and its Fig 12 text call the directory's growth sub-linear."
)

PROC_BYTES = (
    "Measured: with fanout 7 a core's epoch writes to 7 directories (7 store counters, 35 B at 5 B each) and "
    "a word-granular stand-in keeps several Releases unacked; the bytes per entry are fabricsim's choice (the "
    "paper gives entry counts only)."
)

ATA_UPI = (
    "Measured: on UPI (50 ns crossings) a core has fewer alltoall rounds in flight than on CXL (150 ns), so "
    "its directories hold fewer counters and recycled Releases (CXL: ~1.2 KB, within the paper's bound). The "
    "paper's UPI figure is close to its CXL one, so its rounds stay in flight longer than ours; how long an "
    "ATA round computes is not given (see the robustness table), nor are the entry sizes."
)

SUBLINEAR = (
    "A stand-in's fanout is capped at hosts - 1: with 2 hosts SSSP, PR and the others write to one host, "
    "with 8 hosts to 7, so their store counters grow with the fanout (1 -> 7 directories). ATA, whose "
    "fanout also grows, is sub-linear; the paper's fanouts at fewer hosts are not given."
)

MUTANTS = [
    Mutant(
        "no-compute",
        "ATA and the stand-ins with no computation between epochs: Releases pile up as fast as the core issues "
        "them, and so do the tables",
        set={"workload.remote_stores.compute": "0ns"},
        flips=["ATA's directory storage at 8 hosts (CXL)"],
    ),
]

CHOICES = [
    Choice(
        "ATA's computation per alltoall round",
        "100 ns",
        [
            Variant(
                "1 µs",
                "1 µs per round",
                set={"workload.remote_stores.compute": "1000ns"},
                when=lambda labels: labels.get("workload") == "ATA",
            )
        ],
    ),
]

EXPERIMENT = Experiment(
    seed="cord",
    figure="fig11",
    title="CORD Fig 11: storage against hosts",
    sweep=sweep,
    analyze=analyze,
    plot=plot,
    compare=compare,
    notes=NOTES,
    mutants=MUTANTS,
    choices=CHOICES,
)
