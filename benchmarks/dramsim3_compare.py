#!/usr/bin/env python3
"""DRAMsim3 and fabricsim's DRAM side by side (docs/dram.md).

    python3 benchmarks/dramsim3_compare.py --dramsim3 /work/dramsim3 \\
        [--fabricsim target/release/examples/dram_trace] [--requests 20000]

DRAMsim3 is not part of this repository. Build it from its public sources
(https://github.com/umd-memsys/DRAMsim3) in a folder outside the repository:

    git clone https://github.com/umd-memsys/DRAMsim3 /work/dramsim3
    cd /work/dramsim3 && mkdir -p build && cd build && cmake .. && make dramsim3

which leaves libdramsim3.so in /work/dramsim3; pass that folder with
--dramsim3 or the DRAMSIM3 environment variable. This script compiles a small
driver against it (in a temporary folder) that feeds DRAMsim3 the same trace
fabricsim gets. fabricsim's side is the `dram_trace` example
(`cargo build --release -p fabricsim --example dram_trace`), which drives the
DRAM component alone.

Both run DRAMsim3's DDR4_8Gb_x8_2400.ini and DDR4_8Gb_x8_3200.ini (one
64-bit channel, two ranks of 4 bank groups x 4 banks, 8 KiB rows, open page,
address mapping rochrababgco, 32-entry read and write queues) with tCK set
to the exact 2000 / data rate ns (the files round it to 0.83 / 0.63 ns),
and fabricsim's DDR4-2400 / DDR4-3200 presets with ranks = 2 and the same
mapping (row:channel:rank:bank:column; the bank field's low bits are the bank
group, as bg sits below ba in rochrababgco). The timings are the same JEDEC
values on both sides.

Traces (64 B requests, Poisson arrivals at an offered load in GB/s, times in
ps): idle row hit / closed bank / row conflict (one read every microsecond);
random reads, random reads and writes 2:1, a sequential read stream, and
sequential read and write streams 2:1 (two regions), each from light load
past saturation. Requests wait in a FIFO in front of the controller when its
queue is full (open loop), so latency is arrival to last data beat.
Per curve: saturation bandwidth (the most delivered at any offered load) and
the knee (the offered load at which mean read latency is twice the lightest
load's, interpolated). Prints a markdown table.
"""

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

DRIVER = r"""
// Feeds DRAMsim3 a trace `TIME_PS ADDR R|W` in arrival order: a request
// enters the controller at the first cycle at or after its time when the
// controller accepts it (else it waits, and so do those behind it).
#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <fstream>
#include <string>
#include <unordered_map>
#include <vector>
#include "memory_system.h"

struct Req { uint64_t t; uint64_t addr; bool w; };

int main(int argc, char** argv) {
    if (argc != 5) { std::fprintf(stderr, "usage: driver INI TRACE TCK_PS OUTDIR\n"); return 2; }
    double tck = std::atof(argv[3]);
    std::ifstream in(argv[2]);
    std::vector<Req> tr;
    uint64_t t; std::string a, k;
    while (in >> t >> a >> k) tr.push_back({t, std::stoull(a, nullptr, 0), k == "W"});
    std::unordered_map<uint64_t, std::deque<uint64_t>> pending;
    std::vector<double> lat;
    uint64_t clk = 0, reads = 0, writes = 0, nreads = 0;
    for (auto& r : tr) nreads += !r.w;
    double last = 0;
    auto rd = [&](uint64_t addr) {
        auto& q = pending[addr];
        double now = clk * tck;
        lat.push_back(now - q.front());
        q.pop_front();
        last = std::max(last, now);
        reads++;
    };
    auto wr = [&](uint64_t) { writes++; if (nreads == 0) last = std::max(last, clk * tck); };
    dramsim3::MemorySystem mem(argv[1], argv[4], rd, wr);
    size_t next = 0;
    while (next < tr.size() || reads < nreads) {
        while (next < tr.size() && tr[next].t <= clk * tck + 0.5 &&
               mem.WillAcceptTransaction(tr[next].addr, tr[next].w)) {
            if (!tr[next].w) pending[tr[next].addr].push_back(tr[next].t);
            mem.AddTransaction(tr[next].addr, tr[next].w);
            next++;
        }
        mem.ClockTick();
        clk++;
    }
    double mean = 0;
    for (double x : lat) mean += x;
    mean = lat.empty() ? 0 : mean / lat.size();
    std::sort(lat.begin(), lat.end());
    double median = lat.empty() ? 0 : lat[lat.size() / 2];
    double span = std::max(1.0, last - (tr.empty() ? 0 : tr[0].t));
    std::printf("{\"reads\": %" PRIu64 ", \"writes\": %" PRIu64 ", \"mean_read_ns\": %.3f, "
                "\"median_read_ns\": %.3f, \"gbps\": %.4f}\n",
                reads, writes, mean / 1e3, median / 1e3, tr.size() * 64.0 / span * 1e3);
    return 0;
}
"""

# (fabricsim preset, DRAMsim3 config, data rate MT/s)
CONFIGS = [("DDR4-2400", "DDR4_8Gb_x8_2400.ini", 2400), ("DDR4-3200", "DDR4_8Gb_x8_3200.ini", 3200)]
FABRICSIM_KEYS = ["ranks=2", 'mapping="row:channel:rank:bank:column"']
LINE = 64
ROW_LINES = 128  # 8 KiB rows
BANK_STRIDE = ROW_LINES * LINE  # bank field just above the column
ROW_STRIDE = BANK_STRIDE * 16 * 2  # 16 banks x 2 ranks
CAPACITY = 16 << 30
LOADS = [0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0, 1.1]


def need_dramsim3(path):
    msg = (
        "DRAMsim3 not found{}. Build it outside this repository and pass its folder:\n"
        "  git clone https://github.com/umd-memsys/DRAMsim3 /work/dramsim3\n"
        "  cd /work/dramsim3 && mkdir -p build && cd build && cmake .. && make dramsim3\n"
        "  python3 benchmarks/dramsim3_compare.py --dramsim3 /work/dramsim3   (or DRAMSIM3=/work/dramsim3)"
    )
    if not path:
        sys.exit(msg.format(" (no --dramsim3 and no DRAMSIM3 variable)"))
    for f in ["libdramsim3.so", "src/memory_system.h", "configs"]:
        if not os.path.exists(os.path.join(path, f)):
            sys.exit(msg.format(f": {os.path.join(path, f)} is missing"))


def build_driver(ds3, work):
    src = os.path.join(work, "driver.cc")
    exe = os.path.join(work, "driver")
    with open(src, "w") as f:
        f.write(DRIVER)
    inc = ["-I" + os.path.join(ds3, d) for d in ["src", "ext/headers", "ext/fmt/include"]]
    cmd = ["g++", "-O2", "-std=c++11", src, "-o", exe, *inc, "-L" + ds3, "-ldramsim3", "-Wl,-rpath," + ds3]
    subprocess.run(cmd, check=True)
    return exe


def ini_with_exact_tck(ds3, name, rate, work):
    """DRAMsim3's config with tCK = 2000 / rate ns (the file rounds it) and output off."""
    out = os.path.join(work, name)
    lines = []
    with open(os.path.join(ds3, "configs", name)) as f:
        for line in f:
            key = line.split("=")[0].strip()
            if key == "tCK":
                line = f"tCK = {2000 / rate:.6f}\n"
            elif key == "output_level":
                line = "output_level = 0\n"
            lines.append(line)
    with open(out, "w") as f:
        f.writelines(lines)
    return out


def addr(bank, row, col):
    return row * ROW_STRIDE + bank * BANK_STRIDE + col * LINE


def idle_trace(kind, n=64):
    """One read every microsecond: row hits in one row; each to a bank not yet
    touched (closed); alternating two rows of one bank (conflicts)."""
    out = []
    for i in range(n):
        if kind == "row hit":
            a = addr(0, 0, i % ROW_LINES)
        elif kind == "closed":
            a = addr(i % 32, i // 32 + 1, 0)
        else:
            a = addr(0, i % 2, 0)
        out.append((1_000_000 * (i + 1), a, False))
    return out


def load_trace(kind, gbps, n, seed):
    rng = random.Random(seed)
    gap = LINE / gbps * 1e3  # mean ps between requests
    t = 1000.0
    out = []
    seq_r = seq_w = 0
    for i in range(n):
        t += rng.expovariate(1.0 / gap)
        write = kind.endswith("2:1") and i % 3 == 2
        if kind.startswith("random"):
            a = rng.randrange(CAPACITY // LINE) * LINE
        elif write:
            a = CAPACITY // 2 + seq_w * LINE
            seq_w += 1
        else:
            a = seq_r * LINE
            seq_r += 1
        out.append((int(t), a, write))
    return out


def write_trace(trace, path, tck_ps):
    """Times moved to the nearest clock edge, so DRAMsim3 (which takes
    requests on its clock) and fabricsim see the same arrivals."""
    with open(path, "w") as f:
        for t, a, w in trace:
            f.write(f"{round(round(t / tck_ps) * tck_ps)} {a:#x} {'W' if w else 'R'}\n")


def run_both(fab, drv, ini, preset, rate, trace, work):
    tck_ps = 2e6 / rate
    path = os.path.join(work, "trace.txt")
    write_trace(trace, path, tck_ps)
    outdir = os.path.join(work, "out")
    os.makedirs(outdir, exist_ok=True)
    d = json.loads(
        subprocess.run([drv, ini, path, f"{tck_ps:.6f}", outdir], capture_output=True, text=True, check=True)
        .stdout.strip()
        .splitlines()[-1]
    )
    f = json.loads(
        subprocess.run(
            [fab, path, f'dram="{preset}"', *FABRICSIM_KEYS], capture_output=True, text=True, check=True
        ).stdout
    )
    return d, f


def knee(curve):
    """Offered load (GB/s) at which mean read latency reaches twice the lightest load's."""
    base = curve[0][1]
    for (x0, y0), (x1, y1) in zip(curve, curve[1:]):
        if y1 >= 2 * base:
            return x0 + (x1 - x0) * (2 * base - y0) / (y1 - y0) if y1 > y0 else x1
    return float("nan")


def pct(a, b):
    return (a - b) / b * 100 if b else float("nan")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dramsim3", default=os.environ.get("DRAMSIM3"), help="DRAMsim3 folder (or DRAMSIM3)")
    ap.add_argument("--fabricsim", default=os.path.join(ROOT, "target/release/examples/dram_trace"))
    ap.add_argument("--requests", type=int, default=20000, help="requests per loaded point")
    ap.add_argument("--configs", nargs="+", default=[c[0] for c in CONFIGS])
    ap.add_argument("--curves", action="store_true", help="also print every point of every curve")
    a = ap.parse_args()
    need_dramsim3(a.dramsim3)
    if not os.path.exists(a.fabricsim):
        sys.exit(f"{a.fabricsim} is missing: cargo build --release -p fabricsim --example dram_trace")
    work = tempfile.mkdtemp(prefix="dramsim3_compare_")
    try:
        drv = build_driver(a.dramsim3, work)
        rows = []
        for preset, ini_name, rate in [c for c in CONFIGS if c[0] in a.configs]:
            ini = ini_with_exact_tck(a.dramsim3, ini_name, rate, work)
            peak = rate * 8 / 1000  # GB/s of one 64-bit channel
            for kind in ["row hit", "closed", "conflict"]:
                d, f = run_both(a.fabricsim, drv, ini, preset, rate, idle_trace(kind), work)
                rows.append((preset, f"idle {kind} (ns)", d["median_read_ns"], f["median_read_ns"]))
            for kind in ["random read", "random read:write 2:1", "sequential read", "sequential read:write 2:1"]:
                cd, cf = [], []
                for i, load in enumerate(LOADS):
                    trace = load_trace(kind, load * peak, a.requests, seed=1000 + i)
                    d, f = run_both(a.fabricsim, drv, ini, preset, rate, trace, work)
                    cd.append((load * peak, d["mean_read_ns"], d["gbps"]))
                    cf.append((load * peak, f["mean_read_ns"], f["gbps"]))
                    if a.curves:
                        print(
                            f"{preset} {kind} offered {load * peak:6.2f} GB/s: DRAMsim3 {d['mean_read_ns']:9.1f} ns "
                            f"{d['gbps']:6.2f} GB/s | fabricsim {f['mean_read_ns']:9.1f} ns {f['gbps']:6.2f} GB/s",
                            flush=True,
                        )
                sd, sf = max(p[2] for p in cd), max(p[2] for p in cf)
                rows.append((preset, f"{kind}: saturation (GB/s)", sd, sf))
                rows.append(
                    (preset, f"{kind}: knee (offered GB/s)", knee([p[:2] for p in cd]), knee([p[:2] for p in cf]))
                )
        print(
            f"\n`python3 benchmarks/dramsim3_compare.py --requests {a.requests}` "
            f"(DRAMsim3 {a.dramsim3}; fabricsim {os.path.relpath(a.fabricsim, ROOT)})\n"
        )
        print("| config | measure | DRAMsim3 | fabricsim | difference |")
        print("|---|---|---|---|---|")
        for preset, what, d, f in rows:
            print(f"| {preset} | {what} | {d:.2f} | {f:.2f} | {pct(f, d):+.1f} % |")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
