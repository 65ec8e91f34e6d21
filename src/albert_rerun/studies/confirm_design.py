"""Kept for old imports until they name ``confirm_analysis``, which holds the design."""
import sys

from . import confirm_analysis

sys.modules[__name__] = confirm_analysis
