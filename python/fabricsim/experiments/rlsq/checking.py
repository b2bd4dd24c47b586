"""RLSQ §5.1: the root complex's read ordering checked exhaustively from
the same agents Fig 5 times. MP over DMA (the host writes data, then the
flag with release; the NIC reads the flag with acquire, then the data)
must never see the new flag with the old data when the NIC, the RLSQ or
the speculative RLSQ orders the reads, and does on today's unordered PCIe
("a data read that hits in the cache can pass the lock read that misses",
§3). Two broken root complexes must be caught: an acquire that does not
hold back later reads, and speculation without the squash. Behind the
root complex the host is a MESI domain (host cores' caches, one
directory); the root complex is one of its sharers ("the RLSQ is a
sharer", §5.1): every state keeps one writer or many readers over the
host caches and the root complex's copies, and a directory that forgets
the root complex as a sharer is caught. The Single
Read GET (§6.4: the host writes footer, data, header; the NIC reads them
back) must never return a torn object when every line is ordered, and
does when only the header carries acquire.

§5.2: a host core's MMIO messages (write-combining lines that leave the
core in any order) must reach the NIC in order with an ``sfence`` per
message and with sequence numbers and the root complex's ROB, and do
not without either or when the ROB posts on arrival; a full ROB must
never deadlock, which it does when the core sends without credits."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd

from ...sweeps import Point, Sweep
from .. import Experiment
from ..variants import Mutant
from ..verdicts import CHECKER, Predicate, Row, table, text

FIG = "RLSQ checker"
LITMUS = Path(__file__).resolve().parent.parent.parent / "litmus"
TEST = "MP+rel+acq.litmus"
SINGLE = "pcie/SingleRead.litmus"
SINGLE_HDR = "pcie/SingleRead+hdr.litmus"
VALIDATION = "pcie/Validation.litmus"
MMIO = "pcie/MMIO.litmus"
DMA_WRITE = "pcie/MP+dmawr.litmus"
WR = "pcie/WR+host.litmus"
SWMR = "pcie/SWMR.litmus"
SQUASH = "pcie/MP+squash.litmus"
#: the litmus model a test's forbidden outcomes come from (WR+host: a store buffering shape, forbidden by SC)
MODEL = {WR: "sc"}
#: the variants whose host-coherence searches must keep the invariants
COHERENT = ["unordered", "nic", "rc", "thread", "rc-opt"]
#: variant -> whether the DMA-write tests' forbidden outcomes must stay unreachable
WRITE_EXPECT = {
    "unordered": True,
    "nic": True,
    "rc": True,
    "thread": True,
    "rc-opt": True,
    "rc+release-no-wait": False,
    "rc+read-passes-write": False,
}
#: MMIO mode -> whether the stream must arrive in order (and the search complete)
MMIO_EXPECT = {"fence": True, "rob": True, "unordered": False, "rob+rob-on-arrival": False}
#: variant -> whether MP's forbidden outcome must stay unreachable
EXPECT = {
    "nic": True,
    "rc": True,
    "thread": True,
    "rc-opt": True,
    "unordered": False,
    "rc+acquire-no-block": False,
    "rc-opt+no-squash": False,
}

NOTES = """
Each point is one exhaustive search of the pcie protocol's agents small:
MP+rel+acq with P0 a host core (its stores leave in program order) and P1
a NIC queue pair (`--protocol pcie --set variant=VARIANT --set nic=1`): one root complex with the RLSQ,
one host directory that serves requests for different lines in any order
and invalidates the root complex's copies of a line a host store writes.
A point passes when no outcome RC forbids is reachable; a broken variant
must reach it.

The host is a MESI domain: the host core's stores and loads go through
its private cache to the one blocking directory, which records the root
complex as a sharer of what it read (never as an owner: it gets no
Exclusive) and invalidates it when a host core writes; the root complex
squashes the entries of that line that hold data (only RC-opt keeps data
while waiting) and acknowledges. SWMR (two host cores, the NIC reading
and DMA-writing the same lines, `--set nic=2`) and MP+squash (MP with a third
NIC read that the host does not write) are searched with the coherence
invariants checked in every state; `forget-rc` is the directory that
never records the root complex.

W→R is checked across lines (WR+host, under SC: the NIC writes x then
reads y, a host core writes y then reads x): on one line the directory
already orders the NIC's read after its write (the root complex has one
request per line out).

The MMIO test (`--protocol pcie --set mmio=MODE`) has one host core write two messages
(data, doorbell with release, fence) to the same device registers; its
write-combining buffers flush their lines in any order, the root
complex's ROB has one entry per virtual network (relaxed stores,
releases). Its final state is the device's registers:
the first message's data last is the forbidden outcome.
"""


def _keys(variant: str, nic: int) -> tuple[dict[str, Any], str | None]:
    """A variant label (``rc-opt``, ``rc+release-no-wait``, ``mmio-rob``) as the pcie family's
    ``[protocol.pcie]`` keys and mutant."""
    base, _, mutant = variant.partition("+")
    if base.startswith("mmio-"):
        return {"mmio": base.removeprefix("mmio-")}, mutant or None
    return {"variant": base, "nic": nic}, mutant or None


def _point(test: str, variant: str, nic: int = 1) -> Point:
    keys, mutant = _keys(variant, nic)
    model = MODEL.get(test, "rc")
    litmus = {"test": test, "protocol": "pcie", "set": keys, "mutant": mutant, "model": model}
    return Point(
        sweep="rlsq/checking",
        text=json.dumps({"litmus": litmus}, sort_keys=True),
        source="<rlsq checking>",
        fmt="json",
        params={},
        seed=1,
        metrics=(),
        runner="fabricsim.experiments.rlsq.checking:run",
        labels={"variant": variant, "test": test},
    )


def sweep(quick: bool) -> Sweep:
    del quick  # every search is small
    points = [_point(t, v) for t in (TEST, SINGLE, VALIDATION) for v in EXPECT]
    points.append(_point(SINGLE_HDR, "rc-opt"))
    points += [_point(MMIO, f"mmio-{m}") for m in [*MMIO_EXPECT, "rob+rob-no-credit"]]
    points += [_point(t, v, nic=0) for t in (DMA_WRITE, WR) for v in WRITE_EXPECT]
    points += [_point(SWMR, v, nic=2) for v in COHERENT]
    points += [_point(SQUASH, v) for v in ("rc-opt", "rc-opt+forget-rc")]
    return Sweep("rlsq/checking", points)


def run(point: Point) -> dict[str, Any]:
    """One litmus search (a sweep ``runner``): its verdict, state count and time."""
    import fabricsim

    s = json.loads(point.text)["litmus"]
    mutant = point.params.get("litmus.mutant", s["mutant"])
    r = fabricsim.litmus(LITMUS / s["test"], s.get("model", "rc"), s["protocol"], set=s["set"], mutant=mutant)
    keys = " ".join(f"{k}={v}" for k, v in s["set"].items())
    protocol = f"{s['protocol']} {keys}" + (f" mutant={mutant}" if mutant else "")
    # the Single Read tests' torn object: header and footer old (their versions match), data new
    torn = any("1:r0=0" in o and "1:r1=1" in o and "1:r2=0" in o for o in r["observed"])
    return {
        "torn": torn,
        "name": f"{r['test']} {protocol}",
        "ok": bool(r["ok"]),
        "complete": bool(r["complete"]),
        "forbidden_seen": len(r["forbidden_observed"]),
        "deadlock": (r.get("violation") or {}).get("kind") == "deadlock",
        "violation": (r.get("violation") or {}).get("kind") or "",
        "states": int(r["states"]),
        "seconds": float(r["seconds"]),
    }


def analyze(df: pd.DataFrame) -> pd.DataFrame:
    cols = [
        "test",
        "variant",
        "name",
        "ok",
        "complete",
        "forbidden_seen",
        "deadlock",
        "violation",
        "torn",
        "states",
        "seconds",
    ]
    df = df.assign(violation=df["violation"].fillna("").astype(str))
    # the searches' yes/no answers as 0/1 counts: a predicate reads them as numbers (the audit alters them)
    for c in ("ok", "complete", "deadlock", "torn"):
        df[c] = df[c].astype(bool).astype(int)
    return df[cols].reset_index(drop=True)


def plot(data: pd.DataFrame, fig) -> None:
    ax = fig.add_subplot(1, 1, 1)
    ax.barh(range(len(data)), data["states"], color=["C2" if ok else "C3" for ok in data["ok"]])
    ax.set_yticks(range(len(data)), list(data["name"]), fontsize=8)
    ax.set_xlabel("states explored (green: ordered; red: the stale data reachable)")
    fig.suptitle("RLSQ checked: MP over DMA, Single Read, Validation, DMA writes and MMIO")


def compare(data: pd.DataFrame) -> list[Row]:
    rows = _mp_rows(data[data["test"] == TEST].set_index("variant"))
    ordered = [v for v, want in EXPECT.items() if want]
    broken = [v for v, want in EXPECT.items() if not want]
    for test, name, how in (
        (
            SINGLE,
            "Single Read",
            "the header, data and footer, the reverse of the host's footer, data, header: a new datum implies a new "
            "footer",
        ),
        (VALIDATION, "Validation", "the second header after the data: a new datum implies a new second version"),
    ):
        rows.append(
            _torn_row(data[data["test"] == test].set_index("variant"), name, how, ordered, broken, UNSAFE[name])
        )
    hdr = data[data["test"] == SINGLE_HDR]
    rows.append(
        _checked(
            FIG,
            "Single Read with acquire on the header only: torn even under RC-opt",
            None,
            text(
                "§4.1",
                "allowing them to be reordered with respect to each other while still being correctly ordered "
                "after the flag read",
            ),
            float(hdr["torn"].sum()),
            Predicate(
                "the torn object is reachable (RC allows it: the data and footer reads may pass each other)",
                bool(hdr["torn"].any()),
                ", ".join(f"{n}: {s:,} states" for n, s in zip(hdr["name"], hdr["states"])),
            ),
            "An acquire orders what follows it after it, not the later reads among themselves: every line of the "
            "read must carry acquire.",
        )
    )
    rows += _mmio_rows(data[data["test"] == MMIO].set_index("variant"))
    rows += [
        _write_row(
            data[data["test"] == DMA_WRITE].set_index("variant"),
            "DMA writes (data, then the flag with release): ordered under today's PCIe and every RLSQ",
            "rc+release-no-wait",
            text(
                "§2.1, §5.1",
                "Because PCIe guarantees that posted writes from the same source are not reordered ... a PCIe "
                "release stalls until all prior requests have been completed",
            ),
            "Today's posted writes are performed in order (W→W); the RLSQ performs plain writes in any order but "
            "a release only after every earlier request left it.",
        ),
        _write_row(
            data[data["test"] == WR].set_index("variant"),
            "DMA write then read of another line: a host core sees W→R kept",
            "rc+read-passes-write",
            table("Table 1 (PCIe ordering guarantees): W→R Yes"),
            "A read waits in the RLSQ for its QP's earlier writes to be performed (the root complex owns the "
            "line with the value); without that the directory serves the read first and a host core's store "
            "and load fit between.",
        ),
        _coherence_row(data[data["test"].isin([SWMR, SQUASH])]),
    ]
    return rows


def _checked(*args, **kw) -> Row:
    """A row whose value comes from the model checker's searches (states explored, outcomes reached)."""
    return Row(*args, basis=CHECKER, **kw)


def _coherence_row(d: pd.DataFrame) -> Row:
    """The host MESI domain: the invariants hold in every state; the forgetful directory is caught."""
    d = d.assign(key=d["test"] + " " + d["variant"]).set_index("key")
    held = [f"{SWMR} {v}" for v in COHERENT] + [f"{SQUASH} rc-opt"]
    caught = f"{SQUASH} rc-opt+forget-rc"
    detail = ", ".join(
        f"{n}: {v or 'invariants hold'} ({s:,} states)" for n, v, s in zip(d["name"], d["violation"], d["states"])
    )
    ok = all(k in d.index and bool(d.loc[k, "complete"]) and not d.loc[k, "violation"] for k in held)
    found = caught in d.index and d.loc[caught, "violation"] == "single-writer-multiple-readers"
    return _checked(
        FIG,
        "Host coherence: one writer or many readers over host caches and the root complex; a directory that "
        "forgets the root complex is caught",
        None,
        text("§5.1", "The RLSQ is tracked as a temporary sharer for in-flight speculative reads"),
        float(sum(k in d.index and not d.loc[k, "violation"] for k in held)),
        Predicate(
            "every search of SWMR and MP+squash keeps the invariants; forget-rc breaks single-writer",
            ok and found,
            detail,
        ),
        "The directory records the root complex as a sharer of each line it reads and invalidates it before a "
        "host core may write; the root complex squashes its reads of the line and acknowledges. A directory "
        "that never records it lets a host core take M while the RLSQ holds the old value.",
    )


def _write_row(d: pd.DataFrame, metric: str, broken: str, source, why: str) -> Row:
    """A DMA-write test: never its forbidden outcome under the five variants, reached by `broken`."""
    ordered = [v for v, want in WRITE_EXPECT.items() if want]
    detail = ", ".join(
        f"{n}: {'ok' if ok else 'forbidden outcome'} ({s:,} states)"
        for n, ok, s in zip(d["name"], d["ok"], d["states"])
    )
    ok = all(v in d.index and bool(d.loc[v, "ok"]) and bool(d.loc[v, "complete"]) for v in ordered)
    caught = broken in d.index and int(d.loc[broken, "forbidden_seen"]) > 0
    return _checked(
        FIG,
        metric,
        None,
        source,
        float(sum(bool(d.loc[v, "ok"]) for v in ordered if v in d.index)),
        Predicate(f"{', '.join(ordered)} never reach the forbidden outcome; {broken} does", ok and caught, detail),
        why,
    )


def _mmio_rows(d: pd.DataFrame) -> list[Row]:
    detail = ", ".join(
        f"{n}: {'deadlock' if dl else 'in order' if ok else 'reordered'} ({s:,} states)"
        for n, ok, dl, s in zip(d["name"], d["ok"], d["deadlock"], d["states"])
    )
    ordered = [f"mmio-{m}" for m, want in MMIO_EXPECT.items() if want]
    broken = [f"mmio-{m}" for m, want in MMIO_EXPECT.items() if not want]
    credit, no_credit = "mmio-rob", "mmio-rob+rob-no-credit"
    in_order = all(v in d.index and bool(d.loc[v, "ok"]) and bool(d.loc[v, "complete"]) for v in ordered)
    reordered = all(v in d.index and int(d.loc[v, "forbidden_seen"]) > 0 for v in broken)
    return [
        _checked(
            FIG,
            "MMIO: in order with an sfence per message and with sequence numbers and the ROB, reordered otherwise",
            None,
            text("§5.2", "The Root Complex delays issuing the PCIe write corresponding to the MMIO-Release"),
            float(sum(bool(d.loc[v, "ok"]) for v in ordered if v in d.index)),
            Predicate(
                "fence and rob deliver every message in order; unordered and a ROB posting on arrival do not",
                in_order and reordered,
                detail,
            ),
            "Write-combining buffers flush lines in any order. An sfence holds the next message until the root "
            "complex answered every line of this one; the ROB posts a line only after every lower sequence "
            "number.",
        ),
        _checked(
            FIG,
            "MMIO: the ROB never deadlocks when full; without credits it does",
            None,
            text(
                "§5.2",
                "tracks the highest sequence number for which all preceding sequence numbers have also been received",
            ),
            float(bool(d.loc[no_credit, "deadlock"])) if no_credit in d.index else None,
            Predicate(
                "rob completes every search; rob without credits reaches a deadlock",
                credit in d.index
                and bool(d.loc[credit, "complete"])
                and not bool(d.loc[credit, "deadlock"])
                and no_credit in d.index
                and bool(d.loc[no_credit, "deadlock"]),
                detail,
            ),
            "A core sends only with a credit (fewer writes unanswered than the ROB's entries), so a full ROB "
            "holds every write in flight and the one it waits for is among them. Without credits the ROB fills "
            "with later writes and refuses the one it waits for, stuck behind them on the in-order path.",
        ),
    ]


#: what the paper says of each GET protocol on today's PCIe and with read ordering
UNSAFE = {
    "Single Read": text(
        "§6.4",
        "Single Read is a simpler protocol that previously was not possible due to PCIe read reordering",
    ),
    "Validation": text(
        "§6.3",
        "This protocol is unsafe today because PCIe reads are unordered within an RDMA read ... With our proposed "
        "read ordering, the unmodified protocol works correctly",
    ),
}


def _torn_row(d: pd.DataFrame, name: str, how: str, ordered: list[str], broken: list[str], quote) -> Row:
    """One GET protocol's row: never torn under the ordering variants, torn under the broken ones."""
    detail = ", ".join(
        f"{n}: {'torn' if t else 'whole'} ({s:,} states)" for n, t, s in zip(d["name"], d["torn"], d["states"])
    )
    whole = all(v in d.index and not bool(d.loc[v, "torn"]) and bool(d.loc[v, "ok"]) for v in ordered)
    torn = all(v in d.index and bool(d.loc[v, "torn"]) for v in broken)
    return _checked(
        FIG,
        f"{name}: never torn when every line is ordered, torn on unordered PCIe and without the squash",
        None,
        quote,
        float(sum(bool(d.loc[v, "torn"]) for v in broken if v in d.index)),
        Predicate(
            "nic, rc, thread, rc-opt never return the torn object; unordered and the broken RLSQs do",
            whole and torn,
            detail,
        ),
        f"Ordered reads see {how}. Unordered, the host's writes can land between reads that the memory "
        "served out of order.",
    )


def _mp_rows(d: pd.DataFrame) -> list[Row]:
    ordered = [v for v, want in EXPECT.items() if want]
    broken = [v for v, want in EXPECT.items() if not want]
    detail = ", ".join(
        f"{n}: {'ok' if ok else 'stale data'} ({s:,} states)" for n, ok, s in zip(d["name"], d["ok"], d["states"])
    )
    return [
        _checked(
            FIG,
            "MP over DMA: ordered by the NIC, the RLSQ (global and per thread) and its speculation",
            None,
            text("§5.1", "Our RLSQ prevents this race"),
            float(sum(bool(d.loc[v, "ok"]) for v in ordered if v in d.index)),
            Predicate(
                "nic, rc, thread and rc-opt complete without the forbidden outcome",
                all(v in d.index and bool(d.loc[v, "ok"]) and bool(d.loc[v, "complete"]) for v in ordered),
                detail,
            ),
            "The NIC waits for the flag before reading the data; the RLSQ reads nothing after the flag's "
            "acquire until it returns; RC-opt reads both at once but a host write to the data line after its "
            "read invalidates it, and the data is read again before it completes after the flag.",
        ),
        _checked(
            FIG,
            "MP over DMA: broken on unordered PCIe and by each broken root complex",
            None,
            text("§3", "a data read that hits in the cache can pass the lock read that misses"),
            float(sum(int(d.loc[v, "forbidden_seen"]) > 0 for v in broken if v in d.index)),
            Predicate(
                "unordered, acquire-no-block and no-squash each reach the new flag with the old data",
                all(v in d.index and int(d.loc[v, "forbidden_seen"]) > 0 for v in broken),
                detail,
            ),
            "The memory serves the data read before the flag read (or the RLSQ completes a stale speculative "
            "read): the host's two stores land in between.",
        ),
    ]


MUTANTS = [
    Mutant(
        "speculation-without-squash",
        "every RC-opt search keeps stale speculative data (the no-squash root complex)",
        set={"litmus.mutant": "no-squash"},
        when=lambda labels: labels.get("variant") == "rc-opt" and labels.get("test") in (TEST, SINGLE, VALIDATION),
        flips=[
            "MP over DMA: ordered by the NIC, the RLSQ (global and per thread) and its speculation",
            "Single Read: never torn when every line is ordered, torn on unordered PCIe and without the squash",
            "Validation: never torn when every line is ordered, torn on unordered PCIe and without the squash",
        ],
    ),
    Mutant(
        "directory-forgets-the-rc",
        "the host directory never records the root complex as a sharer (RC-opt's MP+squash search)",
        set={"litmus.mutant": "forget-rc"},
        when=lambda labels: labels.get("variant") == "rc-opt" and labels.get("test") == SQUASH,
        flips=[
            "Host coherence: one writer or many readers over host caches and the root complex; a directory that "
            "forgets the root complex is caught"
        ],
    ),
    Mutant(
        "rob-posts-on-arrival",
        "the ROB's searches post every write on arrival (no reordering)",
        set={"litmus.mutant": "rob-on-arrival"},
        when=lambda labels: labels.get("variant") == "mmio-rob",
        flips=["MMIO: in order with an sfence per message and with sequence numbers and the ROB, reordered otherwise"],
    ),
    Mutant(
        "rob-without-credits",
        "the ROB's searches let the core send without credits",
        set={"litmus.mutant": "rob-no-credit"},
        when=lambda labels: labels.get("variant") == "mmio-rob",
        flips=["MMIO: the ROB never deadlocks when full; without credits it does"],
    ),
    Mutant(
        "release-that-does-not-wait",
        "every RC search of the DMA-write tests performs a release write at once",
        set={"litmus.mutant": "release-no-wait"},
        when=lambda labels: labels.get("variant") == "rc" and labels.get("test") == DMA_WRITE,
        flips=["DMA writes (data, then the flag with release): ordered under today's PCIe and every RLSQ"],
    ),
]


EXPERIMENT = Experiment(
    seed="rlsq",
    figure="checking",
    title="RLSQ checked: MP over DMA, GETs, DMA writes and MMIO",
    sweep=sweep,
    analyze=analyze,
    plot=plot,
    compare=compare,
    notes=NOTES,
    mutants=MUTANTS,
    no_choices_because="each search is exhaustive over the small litmus test's every interleaving and host "
    "answer order: it has no timing, size or measurement to choose, and the alternatives a search could take "
    "(the broken root complexes, the ROB without credits) are its own points and mutants",
    tags=["checker"],
)
