"""Write examples/cord_table1.toml: CORD's Table 1 system (8 CPU hosts x 8
cores, a 2x4 mesh per host with an LLC/directory slice beside each core,
the hosts joined by one CXL switch). Run from the repository root:

    python3 scripts/gen_cord_table1.py > examples/cord_table1.toml

The experiments build the same system in Python
(fabricsim.experiments.cord.system.table1); tests/test_cord.py checks that
the two agree.
"""

HOSTS, ROWS, COLS = 8, 2, 4

print("""# CORD's Table 1 system (seed 000, written by scripts/gen_cord_table1.py).
#
# 8 CPU hosts x 8 cores. Each host is a 2x4 mesh of routers; at each router
# sit one core (requester hN_cI) and one LLC slice with its directory slice
# (memory hN_llcI). Router hN_r0 of every host links to the single switch
# `cxl`. Choices the paper does not make (state them when you change them):
# - core clock 2 GHz: the mesh's 10-cycle links are 5 ns, the LLC's
#   8-cycle access is 4 ns (protocol.directory_latency);
# - Table 1's 150 ns CXL "link latency" is taken as one host-to-host
#   crossing, host -> switch -> host: each host's uplink is 75 ns
#   (defaults.link.latency; UPI's 50 ns is defaults.link.latency = "25ns");
# - 64 GB/s per direction on every link; memory is homed in blocks
#   (protocol.interleave = footprint / 64): host h's memory is its own 8
#   slices, and a sender's buffer in a host lies in one slice; the LLC
#   holds the working set (no HBM access is timed: write-through stores
#   and loads complete at the LLC).
name = "cord_table1"
description = "CORD Table 1: 8 hosts x 8 cores, 2x4 mesh per host, one CXL switch"

[sim]
seed = 1

[defaults.link]
bandwidth = "64GB/s"
latency = "75ns"        # host uplink to the CXL switch (mesh links set their own)
port_delay = "0ns"

[defaults.switch]
latency = "0.5ns"

[workload]
# CORD's synthetic workload (docs/config.md): every core loops over epochs
# of 64 B Relaxed write-through stores to another host's memory, 4 KiB per
# Release (the paper's Fig 8 defaults); a sender's buffer in a host lies in
# one LLC slice.
pattern = "remote_stores"
footprint = "1GiB"
line = "64B"
warmup = 0
requests = 650          # 10 epochs of 64 stores and a Release per core

[workload.remote_stores]
hosts = 8
fanout = 1
store_size = "64B"
release_every = "4KiB"
compute = "0ns"

[protocol]
name = "cord"
model = "rc"
directory_latency = "4ns"   # LLC slice, 8 cycles at 2 GHz
cache_latency = "1ns"       # a core's handling of an ack or data
control_bytes = "16B"
data_bytes = "80B"
interleave = "16MiB"        # footprint / 64 slices: each host's memory is its own 8 slices

[protocol.core]
preset = "gem5-o3-2ghz"     # gem5's O3 at 2 GHz (docs/cpu-presets.md)

[protocol.cord]
variant = "cord"            # cord | so | mp
""")

print('[[switch]]\nname = "cxl"\n')
for h in range(HOSTS):
    for r in range(ROWS * COLS):
        print(f'[[switch]]\nname = "h{h}_r{r}"\n')
for h in range(HOSTS):
    for r in range(ROWS * COLS):
        print(f'[[requester]]\nname = "h{h}_c{r}"\n')
for h in range(HOSTS):
    for r in range(ROWS * COLS):
        print(f'[[memory]]\nname = "h{h}_llc{r}"\n')


def link(a, b, latency=None):
    lat = f'\nlatency = "{latency}"' if latency else ""
    print(f'[[link]]\na = "{a}"\nb = "{b}"{lat}\n')


for h in range(HOSTS):
    for row in range(ROWS):
        for col in range(COLS):
            r = row * COLS + col
            if col + 1 < COLS:
                link(f"h{h}_r{r}", f"h{h}_r{r + 1}", "5ns")
            if row + 1 < ROWS:
                link(f"h{h}_r{r}", f"h{h}_r{r + COLS}", "5ns")
            link(f"h{h}_c{r}", f"h{h}_r{r}", "0.5ns")
            link(f"h{h}_llc{r}", f"h{h}_r{r}", "0.5ns")
    link(f"h{h}_r0", "cxl")
