#!/usr/bin/env python3
"""BookSim2 and fabricsim side by side on an 8x8 mesh (docs/performance.md).

    python3 benchmarks/booksim_compare.py --booksim /tmp/booksim/src/booksim \
        --fabricsim target/release/examples/load_sweep [--loads 0.01 0.1 ...]

Runs BookSim2 (one-flit packets, DOR, uniform random, Bernoulli injection)
and fabricsim (benchmarks/booksim_mesh88.toml: 16-byte posted writes, DOR,
uniform random, Poisson injection) at the same offered loads, one after the
other on this machine, and prints one markdown row per load: mean latency,
accepted throughput (flits per cycle per node), router traversals and their
rate per CPU second. BookSim's code is not part of this repository.
"""

import argparse
import json
import os
import re
import subprocess
import tempfile

BOOKSIM_CONFIG = """\
topology = mesh;
k = 8;
n = 2;
routing_function = dor;
num_vcs = 8;
vc_buf_size = 8;
wait_for_tail_credit = 0;
vc_allocator = separable_input_first;
sw_allocator = separable_input_first;
alloc_iters = 1;
credit_delay = 1;
routing_delay = 1;
vc_alloc_delay = 1;
sw_alloc_delay = 1;
st_final_delay = 1;
input_speedup = 1;
output_speedup = 1;
internal_speedup = 1.0;
traffic = uniform;
packet_size = 1;
injection_process = bernoulli;
warmup_periods = 3;
sample_period = 10000;
max_samples = 10;
"""


def booksim(binary, load, sim_type):
    with tempfile.NamedTemporaryFile("w", suffix=".cfg", delete=False) as f:
        f.write(BOOKSIM_CONFIG + f"sim_type = {sim_type};\ninjection_rate = {load};\n")
        path = f.name
    before = os.times()
    out = subprocess.run([binary, path], capture_output=True, text=True).stdout
    after = os.times()
    os.unlink(path)
    cpu = (after.children_user - before.children_user) + (after.children_system - before.children_system)

    def last(pattern):
        m = re.findall(pattern, out)
        return float(m[-1]) if m else float("nan")

    cycles = last(r"Time taken is (\d+) cycles")
    accepted = last(r"Accepted flit rate average = ([\d.eE+-]+)")
    hops = last(r"Hops average = ([\d.eE+-]+)")
    traversals = accepted * 64 * cycles * hops
    return {
        "latency": last(r"Packet latency average = ([\d.eE+-]+)"),
        "accepted": accepted,
        "traversals": traversals,
        "cpu_s": cpu,
        "unstable": "unstable" in out.lower(),
    }


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--booksim", required=True)
    ap.add_argument("--fabricsim", required=True, help="path of the load_sweep example binary")
    ap.add_argument("--config", default=os.path.join(os.path.dirname(__file__), "booksim_mesh88.toml"))
    ap.add_argument("--loads", type=float, nargs="+", default=[0.01, 0.1, 0.2, 0.3, 0.4, 0.45, 0.5, 0.6])
    ap.add_argument("--cycles", type=float, default=60000)
    a = ap.parse_args()
    fs = subprocess.run(
        [a.fabricsim, a.config, "16", str(a.cycles)] + [str(x) for x in a.loads],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    fab = [json.loads(line) for line in fs.splitlines() if line.strip()]
    print(
        "| offered (flits/cycle/node) | BookSim latency (cycles) | fabricsim latency (ns) "
        "| BookSim accepted | fabricsim accepted | BookSim traversals/CPU-s | fabricsim traversals/CPU-s | ratio |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for load, f in zip(a.loads, fab):
        # Latency mode below saturation (BookSim gives up on an unstable run), throughput mode above.
        b = booksim(a.booksim, load, "latency")
        if b["unstable"] or b["accepted"] != b["accepted"]:
            b = booksim(a.booksim, load, "throughput")
            b["latency"] = float("nan")
        bs = b["traversals"] / b["cpu_s"] if b["cpu_s"] > 0 else float("nan")
        fsr = f["switch_traversals"] / f["cpu_s"]
        print(
            f"| {load} | {b['latency']:.1f} | {f['latency_ns']:.1f} | {b['accepted']:.3f} | {f['accepted']:.3f} "
            f"| {bs / 1e6:.2f} M | {fsr / 1e6:.2f} M | {fsr / bs:.1f}x |",
            flush=True,
        )


if __name__ == "__main__":
    main()
