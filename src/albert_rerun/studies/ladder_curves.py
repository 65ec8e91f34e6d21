"""Where each 16x curve leaves the loss plateau: now in ``studies.ladder`` (the ladder's
analysis in one module); these names stay for the chapters' notebooks."""
from .ladder import RUNG, arm_range, curve_sequences, delay, first_below, passes, rung_level  # noqa: F401
