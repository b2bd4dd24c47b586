"""ESF (An et al.): interconnect-layer figures. Parameters not given by the
paper are fabricsim's choices, stated in each experiment's ``notes``."""
