"""Kept for old imports until they name ``confirm_analysis`` and ``confirm``."""
from .confirm import curves_figure, p_text as _p, report, results_table  # noqa: F401
from .confirm_analysis import REVERSED, holm_tests  # noqa: F401
