"""CORD (Yu, Oswald, Khandelwal, ISCA'25; seed 000): write-through stores
ordered at the directory. The paper's applications are not available:
synthetic stand-ins (pattern "remote_stores") replace them, stated in each
experiment's ``notes``."""

#: Results of the paper's evaluation that fabricsim does not reproduce (yet), and why; the report lists them.
NOT_REPRODUCED = [
    (
        "CORD Fig 2",
        "SO's per-application overhead (share of time waiting for acks, share of traffic that is acks): not yet "
        "an experiment; every SO run of Figs 7 and 13 reports ack_wait_ns and its traffic classes.",
    ),
    (
        "CORD Figs 7 and 13, WB",
        "the write-back (MESI) comparison: the Table 2 stand-ins have no receivers that read the data, so a "
        "write-back writer would keep its lines and never pay the traffic the paper measures.",
    ),
    (
        "CORD Figs 9-12",
        "latency, bit-width (SEQ-8/SEQ-40) and storage sweeps: not yet run as experiments (the table high-water "
        "marks they need are in every run's protocol statistics).",
    ),
    (
        "CORD Table 3",
        "area, power and energy from CACTI 7.0: a circuit model fabricsim does not have.",
    ),
]
