"""CORD (Yu, Oswald, Khandelwal, ISCA'25; seed 000): write-through stores
ordered at the directory. The paper's applications are not available:
synthetic stand-ins (pattern "remote_stores") replace them, stated in each
experiment's ``notes``."""

#: Results of the paper's evaluation that fabricsim does not reproduce (yet), and why; the report lists them.
NOT_REPRODUCED = [
    (
        "CORD Figs 2, 7, 13",
        "per-application time and traffic (RC and TSO): the apps (Pannotia, Chai, DOE MPI traces) are not "
        "available; their Table 2 stand-ins (presets of pattern remote_stores) and the WB runs are still to come.",
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
