"""fabricsim's memory-model oracle side by side with herd7 on C litmus tests.

For each model, every C litmus test that fabricsim parses runs on
``fabricsim litmus --model M --json`` and on herd7 with the model's cat
file; the final states herd7 prints (its observed variables: those of the
condition) are compared with fabricsim's allowed outcomes projected on the
same variables. The table per model (tests compared, agree, differ, each
difference by class) goes to stdout in Markdown, the details per test to
``--details`` as JSON lines.

- sc: ``--model sc`` against ``-model sc.cat`` (herd's SC);
- tso: ``--model tso`` (standard mapping) against ``-model
  benchmarks/herd/c11-x86tso.cat``: x86-TSO over the events of herd's C
  front end with the standard C11-to-x86 mapping (herd has no x86 model
  for C programs);
- rc: ``--model rc`` against ``-model rc11.cat`` (herd's RC11). A
  difference is classified by running herd again with rc11.cat's
  NO-THIN-AIR axiom replaced by fabricsim's NO-CAUSALITY-CYCLE (the file is
  written at run time from herd's own rc11.cat into a temporary directory).

Tests with Linux-kernel primitives (``READ_ONCE``, ``smp_mb``, ...) run on
herd7 with its own ``kernel.def`` macros (and, under TSO,
``benchmarks/herd/lk-tags.bell`` to name the kernel's fence tags); they are
compared under SC and TSO, not RC: RC11 gives the kernel's annotations no
meaning (fabricsim maps them onto C11, docs/checker.md).

The corpora and herd7 stay outside the repository::

    git clone https://github.com/hernanponcedeleon/Dat3M /tmp/corpora/dat3m
    git clone https://github.com/herd/herdtools7 /tmp/corpora/herdtools7
    # herd7 7.57 (the last release that Debian 12's OCaml 4.13 and dune 2.9 build)
    apt-get install ocaml-nox ocaml-dune menhir libmenhir-ocaml-dev ocaml-findlib libzarith-ocaml-dev
    mkdir -p /work/herdtools7-build
    git -C /tmp/corpora/herdtools7 archive 7.57 | tar -x -C /work/herdtools7-build
    (cd /work/herdtools7-build && sh version-gen.sh "$PWD/install" && dune build --profile release herd/herd.exe)
    python3 benchmarks/herd_compare.py --herd /work/herdtools7-build/_build/default/herd/herd.exe \\
        --herd-lib /work/herdtools7-build/herd/libdir /tmp/corpora/dat3m /tmp/corpora/herdtools7

``fabricsim`` must be importable (``pip install -e .``); ``--fabricsim CMD``
runs another command line instead of ``python3 -m fabricsim``.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
MODELS = ("sc", "tso", "rc")
HERD_CAT = {"sc": "sc.cat", "tso": str(HERE / "herd" / "c11-x86tso.cat"), "rc": "rc11.cat"}

# Linux-kernel primitives: a test using one is compared under SC only.
LKMM = re.compile(
    r"\b(READ_ONCE|WRITE_ONCE|smp_\w+|atomic_t|atomic_(read|set|inc|dec|add|sub)\w*|"
    r"atomic_(xchg|fetch_\w+?)_(relaxed|acquire|release)|atomic_xchg|xchg\w*)\b"
)
THIN_AIR = re.compile(r"^\s*acyclic\s*\(?\s*sb\s*\|\s*rf\s*\)?\s*as\s+no-thin-air\s*$", re.M)
# fabricsim's RC axiom 4 (check/oracle.rs): preserved program order ∪ rf is acyclic.
NO_CAUSALITY_CYCLE = """
let ACQR = R & (ACQ | ACQ_REL | SC)
let RELW = W & (REL | ACQ_REL | SC)
let ppo_fab = [ACQR]; po; [M] | [M]; po; [RELW]
  | [R]; po; [F & (ACQ | ACQ_REL | SC)]; po; [M]
  | [M]; po; [F & (REL | ACQ_REL | SC)]; po; [W]
  | [M]; po; [F & SC]; po; [M]
  | ([M]; po-loc; [M]) \\ (W * R)
  | rmw | data | [R]; ctrl; [W]
acyclic (ppo_fab | rf) as no-causality-cycle
"""


def c_litmus_files(paths: list[str]) -> list[str]:
    """The ``*.litmus`` files under the paths whose first non-blank line starts with ``C``."""
    out = []
    for p in paths:
        files = [Path(p)] if Path(p).is_file() else sorted(Path(p).rglob("*.litmus"))
        for f in files:
            try:
                text = f.read_text(errors="replace")
            except OSError:
                continue
            first = next((ln for ln in text.splitlines() if ln.strip()), "")
            if first.split()[:1] == ["C"]:
                out.append(str(f))
    return sorted(out)


def run_fabricsim(cmd: list[str], files: list[str], model: str, jobs: int) -> dict[str, dict[str, Any]]:
    """``fabricsim litmus --json`` on the files: file -> its JSON line."""
    res: dict[str, dict[str, Any]] = {}
    for i in range(0, len(files), 500):
        chunk = files[i : i + 500]
        proc = subprocess.run(
            [*cmd, "litmus", *chunk, "--model", model, "--json", "-j", str(jobs)],
            capture_output=True,
            text=True,
            check=False,
        )
        for line in proc.stdout.splitlines():
            if line.startswith("{"):
                r = json.loads(line)
                res[r["file"]] = r
    return res


STATE = re.compile(r"\s*([^;=\s]+)\s*=\s*([^;\s]+)\s*;")


def parse_state(line: str) -> dict[str, str]:
    """``0:r0=1; [x]=2;`` -> {"0:r0": "1", "x": "2"}."""
    return {k.strip("[]"): v for k, v in STATE.findall(line)}


def run_herd(herd: str, lib: list[str], cat: str, file: str, timeout: float, extra: list[str]) -> dict[str, Any]:
    """herd7 on one file: its states, observation and flags, or an error."""
    cmd = [herd]
    for d in lib:
        cmd += ["-I", d]
    cmd += [*extra, "-model", cat, file]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        return {"error": f"timeout ({timeout:g} s)"}
    lines = proc.stdout.splitlines()
    try:
        start = next(i for i, ln in enumerate(lines) if ln.startswith("States "))
    except StopIteration:
        msg = (proc.stderr.strip() or proc.stdout.strip()).splitlines()
        return {"error": msg[-1] if msg else f"exit {proc.returncode}"}
    n = int(lines[start].split()[1])
    states = [parse_state(ln) for ln in lines[start + 1 : start + 1 + n]]
    flags = [ln.split(None, 1)[1] for ln in lines if ln.startswith("Flag ")]
    obs = next((ln.split()[2] for ln in lines if ln.startswith("Observation ")), "")
    return {"states": states, "flags": flags, "observation": obs}


def project(outcome: str, keys: set[str]) -> frozenset[tuple[str, str]]:
    return frozenset((k, v) for k, v in parse_state(outcome).items() if k in keys)


def compare(fab: dict[str, Any], herd: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """("agree" | a difference class, details)."""
    hstates = {frozenset(s.items()) for s in herd["states"]}
    keys = {k for s in herd["states"] for k in s}
    fstates = {project(o, keys) for o in fab["allowed"]}
    if fstates == hstates:
        return "agree", {}
    only_fab = sorted("; ".join(f"{k}={v}" for k, v in sorted(s)) for s in fstates - hstates)
    only_herd = sorted("; ".join(f"{k}={v}" for k, v in sorted(s)) for s in hstates - fstates)
    return "differ", {"only_fabricsim": only_fab, "only_herd": only_herd}


def classify(model: str, text: str, detail: dict[str, Any], herd: dict[str, Any], fab_axiom_agrees: bool) -> str:
    """The class of a difference (see the module documentation)."""
    if model == "rc" and fab_axiom_agrees and not detail["only_herd"]:
        return "a po ∪ rf cycle (load buffering) that RC11's NO-THIN-AIR forbids and fabricsim's RC allows (documented)"
    # A location parameter that is not atomic: `int* x`, `volatile int *x`, `intptr_t* x`.
    plain = re.search(r"[(,]\s*(volatile\s+)?(int|intptr_t)\s*\*", text) is not None
    if plain and model == "rc" and any("Dr" in f or "race" in f.lower() for f in herd.get("flags", [])):
        return "plain accesses: a data race (C11 undefined, herd flags it); fabricsim reads them as relaxed atomics"
    if model == "tso" and "cmpxchg" in text and not detail["only_fabricsim"]:
        return (
            "a failed fully ordered cmpxchg: herd's C front end makes it a plain read, fabricsim "
            "MFENCE; LOCK CMPXCHG; MFENCE (x86 locks a CMPXCHG that fails)"
        )
    if not detail["only_herd"]:
        return "fabricsim allows more"
    if not detail["only_fabricsim"]:
        return "herd7 allows more"
    return "both allow outcomes the other forbids"


def rc_fab_lib(lib: list[str]) -> str | None:
    """A directory with ``rc11-fab.cat``: herd's rc11.cat with fabricsim's axiom 4."""
    for d in lib:
        f = Path(d) / "rc11.cat"
        if f.exists():
            text = f.read_text()
            if not THIN_AIR.search(text):
                return None
            tmp = tempfile.mkdtemp(prefix="herd-compare-")
            (Path(tmp) / "rc11-fab.cat").write_text(THIN_AIR.sub(NO_CAUSALITY_CYCLE, text))
            return tmp
    return None


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("paths", nargs="+", help="litmus files or directories (searched recursively)")
    ap.add_argument("--herd", required=True, help="the herd7 executable")
    ap.add_argument("--herd-lib", action="append", default=[], help="herd's libdir (cat files); repeatable")
    ap.add_argument("--fabricsim", default=f"{shlex.quote(sys.executable)} -m fabricsim", help="fabricsim command")
    ap.add_argument("--models", default="sc,tso,rc")
    ap.add_argument("-j", "--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--timeout", type=float, default=30.0, help="seconds per herd7 run")
    ap.add_argument("--details", help="write one JSON line per test and model here")
    args = ap.parse_args(argv)
    models = [m.strip() for m in args.models.split(",") if m.strip()]
    for m in models:
        if m not in MODELS:
            ap.error(f"unknown model {m!r}; expected sc, tso or rc")
    files = c_litmus_files(args.paths)
    if not files:
        ap.error("no C litmus files under the paths")
    fab_cmd = shlex.split(args.fabricsim)
    fab_lib = rc_fab_lib(args.herd_lib) if "rc" in models else None
    details = open(args.details, "w") if args.details else None  # noqa: SIM115
    print(f"C litmus files: {len(files)}\n")
    print("| model | herd7 model | parsed by fabricsim | compared | agree | differ | not compared |")
    print("|---|---|---|---|---|---|---|")
    notes: list[str] = []
    for m in models:
        fab = run_fabricsim(fab_cmd, files, m, args.jobs)
        parsed = [f for f in files if f in fab and "error" not in fab[f]]
        skipped: Counter[str] = Counter()
        todo = []
        for f in files:
            r = fab.get(f)
            if r is None or ("error" in r and r.get("kind") == "refused"):
                continue
            if "error" in r:
                skipped[f"fabricsim: {r.get('kind', 'error')}"] += 1
                continue
            text = Path(f).read_text(errors="replace")
            if m == "rc" and LKMM.search(text):
                skipped["Linux-kernel primitives (no RC11 meaning in herd)"] += 1
                continue
            todo.append((f, text))

        def one(item: tuple[str, str], m: str = m, fab: dict[str, dict[str, Any]] = fab) -> dict[str, Any]:
            f, text = item
            extra = []
            if LKMM.search(text):
                # herd's own kernel.def expands the primitives; the bell names their tags.
                extra = ["-macros", "kernel.def"]
                if m == "tso":
                    extra += ["-bell", str(HERE / "herd" / "lk-tags.bell")]
            h = run_herd(args.herd, args.herd_lib, HERD_CAT[m], f, args.timeout, extra)
            if "error" in h:
                return {"file": f, "model": m, "result": "herd7: " + h["error"]}
            res, detail = compare(fab[f], h)
            if res == "differ":
                hf = None
                if m == "rc" and fab_lib:
                    hf = run_herd(args.herd, [fab_lib, *args.herd_lib], "rc11-fab.cat", f, args.timeout, extra)
                agrees = hf is not None and "states" in hf and compare(fab[f], hf)[0] == "agree"
                res = classify(m, text, detail, h, agrees)
                if hf is not None:
                    detail["herd_with_fabricsim_axiom_agrees"] = agrees
            return {"file": f, "model": m, "result": res, **detail}

        with ThreadPoolExecutor(args.jobs) as pool:
            results = list(pool.map(one, todo))
        counts: Counter[str] = Counter()
        for r in results:
            if r["result"].startswith("herd7: "):
                reason = r["result"]
                if "timeout" not in reason:
                    reason = "herd7: error"
                skipped[reason] += 1
            else:
                counts[r["result"]] += 1
            if details:
                details.write(json.dumps(r) + "\n")
        compared = sum(counts.values())
        differ = compared - counts["agree"]
        not_cmp = ", ".join(f"{n} {k}" for k, n in sorted(skipped.items())) or "0"
        cat = Path(HERD_CAT[m]).name
        print(f"| {m} | `{cat}` | {len(parsed)} | {compared} | {counts['agree']} | {differ} | {not_cmp} |")
        for k, n in sorted(counts.items()):
            if k != "agree":
                notes.append(f"- {m}: {n} × {k}")
    if notes:
        print("\nDifferences by class:\n")
        print("\n".join(notes))
    if details:
        details.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
