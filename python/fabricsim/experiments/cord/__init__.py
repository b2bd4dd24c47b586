"""CORD (Yu, Oswald, Khandelwal, ISCA'25; seed 000): write-through stores
ordered at the directory. The paper's applications are not available:
synthetic stand-ins (pattern "remote_stores") replace them, stated in each
experiment's ``notes``."""

#: Results of the paper's evaluation that fabricsim does not reproduce (yet), and why; the report lists them.
NOT_REPRODUCED = [
    (
        "CORD Table 1, L1 caches and HBM",
        "the cores' two cache levels and the HBM behind the LLC: the write-through variants' cores have no "
        "cache (their stores go through and receivers read their host's LLC slice), WB's have one (Table 1's "
        "L2), and every access that reaches a slice hits there (no HBM access is timed).",
    ),
    (
        "CORD Table 3",
        "area, power and energy from CACTI 7.0: a circuit model fabricsim does not have.",
    ),
]
