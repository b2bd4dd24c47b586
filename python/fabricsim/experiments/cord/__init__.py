"""CORD (Yu, Oswald, Khandelwal, ISCA'25; seed 000): write-through stores
ordered at the directory. The paper's applications are not available:
synthetic stand-ins (pattern "remote_stores") replace them, stated in each
experiment's ``notes``."""

#: Results of the paper's evaluation that fabricsim does not reproduce (yet), and why; the report lists them.
NOT_REPRODUCED = [
    (
        "CORD Table 1, L1 caches and HBM",
        "the cores' two cache levels and the HBM behind the LLC: the write-through variants' cores (the "
        "gem5-o3-2ghz preset, docs/cpu-presets.md) have no private level timed in front of them (their stores "
        "go through and receivers read their host's LLC slice), WB's have Table 1's L1 as tags in front of "
        "Table 1's L2 (the protocol's cache), and every access that reaches a slice hits there (no HBM access "
        "is timed).",
    ),
    (
        "CORD Table 3",
        "area, power and energy from CACTI 7.0: a circuit model fabricsim does not have.",
    ),
    (
        "CORD §5.4 energy: 'CORD's dynamic energy overhead to transmit a 64B store is < 1%'",
        "a ratio of CACTI's table-access energies (0.016-0.025 nJ) to the cited link energy (4-5 pJ/bit) plus "
        "CACTI's 64 B LLC write (3.407 nJ): fabricsim has no energy model, and the claim is arithmetic on "
        "numbers the paper takes from CACTI and the literature, not a simulated result.",
    ),
    (
        "CORD Fig 5 hop counts: SO stalls 2 hops and its Release takes 3; CORD's Release at most 2",
        "the hops are those of the paper's diagram (one per interconnect traversal, with no time); fabricsim "
        "times the same paths (mesh links, uplinks, serialization) instead of counting them, so the hops show "
        "only as time: Figs 8 and 9 compare the round trip CORD removes. Fig 5's message counts are rows "
        "(cord/fig05).",
    ),
    (
        "CORD abstract and conclusion averages (24 % / 13 %, 23 % / 16 % against SO; 3 % / 6 % against MP)",
        "the same quantities as Fig 7's per-link means (28 % / 20 % faster, 11 % / 16 % less traffic, 4 % / 2 % "
        "and 7 % / 5 % against MP), combined over CXL and UPI by a rule the paper does not state: they have no "
        "rows of their own, so no measured value is counted twice.",
    ),
    (
        "CORD §4.3: the epoch-reversal worst case (256 unacked Releases) 'did not occur for any of our "
        "evaluated workloads'",
        "fabricsim's runs bound the unacked-epoch table at Table 3's 8 entries (or at 255 in Fig 11's storage "
        "runs), so the worst case cannot be observed as such; Fig 11's high-water marks (at most 14 unacked "
        "Releases per core) show how far from it the stand-ins stay.",
    ),
]
