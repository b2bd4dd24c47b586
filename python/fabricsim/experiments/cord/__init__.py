"""CORD (Yu, Oswald, Khandelwal, ISCA'25; seed 000): write-through stores
ordered at the directory. The paper's applications are not available:
synthetic stand-ins (pattern "remote_stores") replace them, stated in each
experiment's ``notes``."""

#: Results of the paper's evaluation that fabricsim does not reproduce (yet), and why; the report lists them.
NOT_REPRODUCED = [
    (
        "CORD Figs 7 and 13, WB",
        "the write-back (MESI) comparison: the Table 2 stand-ins have no receivers that read the data, so a "
        "write-back writer would keep its lines and never pay the traffic the paper measures.",
    ),
    (
        "CORD Table 3",
        "area, power and energy from CACTI 7.0: a circuit model fabricsim does not have.",
    ),
]
