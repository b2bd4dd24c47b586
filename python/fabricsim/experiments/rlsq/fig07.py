"""RLSQ Fig 7 in simulation: the four key-value GET protocols of §6.4
(Pessimistic, Validation, FaRM, Single Read) against the item size. The
paper's Fig 7 is measured on ConnectX-6 Dx hardware (16 client threads,
batches of 32, unordered hardware standing in for RC-opt); fabricsim runs
the same GETs on the Table 2 system with RC-opt, 16 QPs, batches of 32 and
each QP's READs serial (Fig 8's setting). The paper's numbers are the
hardware's: they are the reference column only where fabricsim models
the same quantity.

The paper (§6.4): below 4 KB Pessimistic suffers from its RDMA
fetch-and-add; Single Read has about double Validation's throughput for
small items and a 1.6× gain over FaRM at 64 B; FaRM's copy of the item
out of its per-line versions keeps it below Validation for all but the
smallest items."""

from __future__ import annotations

import pandas as pd

from ...sweeps import Sweep
from .. import Experiment
from ..variants import Choice, Mutant, Variant
from ..verdicts import MODEL_TOLERANCE, Row, Tolerance, all_but, all_of, greater, text
from . import gets, system

FIG = "RLSQ Fig 7 (simulated)"
SECTION = "§6.4, Key-Value Store Emulation"
GETS = ["pessimistic", "validation", "farm", "single_read"]
LABEL = {"pessimistic": "Pessimistic", "validation": "Validation", "farm": "FaRM", "single_read": "Single Read"}
SIZES = [64, 128, 256, 512, 1024, 2048, 4096, 8192]
QUICK_SIZES = [64, 512, 4096]
#: "much better": by more than the model tolerance, a difference the model's own error could not make
MUCH = MODEL_TOLERANCE
#: FaRM's client copy (not given: a core's memcpy)
COPY_RATE = "10GB/s"

NOTES = (
    system.__doc__
    + f"""
The GETs as Fig 8's, plus:
- **Pessimistic**: an RDMA fetch-and-add on the item's 8 B header (its
  reader count and the writer's lock bit), executed by the NIC as a read
  with acquire and a write back once the read completes, pipelined with
  one READ of header and item; then an asynchronous fetch-and-add back.
  Nothing else makes the NIC's atomics slow here (the hardware's atomic
  unit is not modelled);
- **FaRM**: 56 B of item and a version per line, one READ without
  ordering; the client copies the item out at {COPY_RATE} (a core's
  memcpy, not given) before its next READ.
Each QP runs 320 GETs (--quick: 128). Throughput is item data.
"""
)


def sweep(quick: bool) -> Sweep:
    return gets.sweep("rlsq/fig07", GETS, QUICK_SIZES if quick else SIZES, quick, _farm_copies)


def _farm_copies(get: str, config: dict) -> None:
    if get == "farm":
        config["workload"]["kvs_gets"]["copy_rate"] = COPY_RATE


def plot(data: pd.DataFrame, fig) -> None:
    gets.plot(data, fig, LABEL, "RLSQ Fig 7 in simulation: GET protocols, 16 QPs, batch 32 (RC-opt)")


def compare(data: pd.DataFrame) -> list[Row]:
    s = gets.by_size(data, GETS)
    sizes = sorted(s["validation"])
    small = sizes[0]
    below_4k = [x for x in sizes if x < 4096]
    return [
        Row(
            FIG,
            "Single Read ÷ FaRM at 64 B",
            1.6,
            text("Fig 7 caption (hardware)", "including a 1.6× gain over FaRM for 64 B objects"),
            s["single_read"][small] / s["farm"][small],
            Tolerance(),
            "Both read 2 lines with one READ per GET; FaRM's client also copies the item out (at "
            f"{COPY_RATE}) before its next READ.",
            "at 64 B the copy takes 6.4 ns against a ≈ 0.45 µs READ, so FaRM is as fast as Single Read; the "
            "hardware's FaRM client pays a deserialization per GET (per-line version checks, a contiguous "
            "buffer) well above a memcpy, which this model does not have.",
        ),
        Row(
            FIG,
            "Pessimistic far below Validation under 4 KB, and not from 4 KB",
            None,
            text(
                SECTION,
                "At sizes less than 4 KB, Pessimistic suffers from the high overhead of the RDMA fetch-and-add "
                "needed to lock access to each item. Validation's protocol only relies on RDMA READs, and it "
                "performs much better",
            ),
            min(s["validation"][x] / s["pessimistic"][x] for x in below_4k),
            all_but(
                {f"{x} B": s["validation"][x] / s["pessimistic"][x] for x in sizes},
                lambda r: r > 1 + MUCH,
                [f"{x} B" for x in sizes if x >= 4096],
                f"Validation ÷ Pessimistic > {1 + MUCH:g} below 4 KB",
            ),
            "Pessimistic's fetch-and-add and READ share one round trip, as Validation's READ1; its write back "
            'and the fetch-and-add back add two lines each way per GET. "Much better" is read as by more '
            "than the model's 15 % tolerance; from 4 KB the transfer dominates both and the claim does not hold.",
            "fabricsim's fetch-and-add costs one line read and one posted write, pipelined with the READ: a "
            "Pessimistic GET takes one round trip where Validation's takes two (its READ2 waits for READ1). "
            "Its write back is a coherent write (the root complex takes the line from the host directory and "
            "commits in order); with 16 QPs that doubles the fetch-and-add's latency (≈ 0.9 µs against 0.46 "
            "µs with one QP), which leaves Pessimistic at most 7 % below Validation up to 256 B and above it "
            "from 512 B. "
            "The hardware's atomics are slow in the NIC's atomic unit, which is not modelled.",
        ),
        Row(
            FIG,
            "FaRM below Validation for all but the smallest items, not at the smallest",
            None,
            text(
                SECTION,
                "this additional copying limits FaRM get throughput to less than what Validation can achieve for "
                "all but the smallest item sizes",
            ),
            min(s["validation"][x] / s["farm"][x] for x in sizes[1:]),
            # "the smallest item sizes": 64 B is the exception; 128 B may be one too, so it is judged neither way
            all_but(
                {f"{x} B": s["validation"][x] / s["farm"][x] for x in sizes if x != 128},
                lambda r: r > 1,
                [f"{small} B"],
                "Validation > FaRM",
            ),
            "FaRM's copy grows with the item while the round trips stay; Validation pays a second round trip. "
            "'The smallest item sizes' (plural) is read as 64 B for certain and 128 B perhaps: 128 B is judged "
            "neither way.",
            "FaRM's READ needs one round trip to Validation's two, and a copy at 10 GB/s (0.8 µs at 8 KiB) "
            "costs less than a round trip until the largest items; the hardware's per-GET deserialization "
            "is not modelled.",
        ),
        # Validation is the other baseline: Single Read against it is Fig 8's row, on the same simulated runs.
        Row(
            FIG,
            "Single Read above Pessimistic and FaRM at every item size",
            None,
            text(
                SECTION, "Our proposed Single Read algorithm, enabled by hardware ordering, is simpler and outperforms"
            ),
            min(s["single_read"][x] / max(s[g][x] for g in ("pessimistic", "farm")) for x in sizes),
            all_of(
                "Single Read > the better of Pessimistic and FaRM at every size",
                {
                    f"{x} B": greater(
                        s["single_read"][x],
                        max(s[g][x] for g in ("pessimistic", "farm")),
                        "Single Read",
                        "best of Pessimistic, FaRM",
                    )
                    for x in sizes
                },
            ),
            "One READ per GET, no atomics, no copy, one line of footer.",
        ),
    ]


MUTANTS = [
    Mutant(
        "single-read-ordered-at-the-nic",
        "the Single Read runs order their lines at the NIC (stop and wait per line) instead of at the RLSQ",
        set={"protocol.pcie.variant": "nic"},
        when=lambda labels: labels.get("get") == "single_read",
        flips=["Single Read above Pessimistic and FaRM at every item size"],
    ),
]

CHOICES = [
    Choice(
        "FaRM's client copy",
        f"{COPY_RATE} (a core's memcpy)",
        [
            Variant(
                "2 GB/s",
                "a deserializing copy",
                set={"workload.kvs_gets.copy_rate": "2GB/s"},
                when=lambda labels: labels.get("get") == "farm",
            )
        ],
    ),
]

EXPERIMENT = Experiment(
    seed="rlsq",
    figure="fig07",
    title="RLSQ Fig 7 in simulation: GET protocols",
    sweep=sweep,
    analyze=gets.analyze,
    plot=plot,
    compare=compare,
    notes=NOTES,
    mutants=MUTANTS,
    choices=CHOICES,
)
