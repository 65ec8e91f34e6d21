"""A notebook's first call: its papermill parameters validated, and the gpu profile stopped
on a machine without CUDA."""
from __future__ import annotations

from ..profiles import Settings, validate_parameters

# Displayed floats are rounded as the prose reads them (nats to 3 decimals, percent to 1):
# their last digits differ between CPUs and mean nothing; a changed result still shows.
DISPLAY_DECIMALS = 3
SMALL_SIGNIFICANT = 2
PERCENT_DECIMALS = 1


def display_rounded(table):
    """``table`` with its floats rounded for display (``DISPLAY_DECIMALS``,
    ``SMALL_SIGNIFICANT`` below 0.01, ``PERCENT_DECIMALS`` in a "%" column)."""
    import numpy as np
    import pandas as pd

    def rounded(values: pd.Series) -> pd.Series:
        array = values.to_numpy(dtype=float)
        label = values.name[-1] if isinstance(values.name, tuple) else values.name
        if str(label).rstrip().endswith("%"):
            return pd.Series(np.round(array, PERCENT_DECIMALS), values.index, name=values.name)
        small = np.isfinite(array) & (array != 0) & (np.abs(array) < 0.01)
        significant = [float(f"{x:.{SMALL_SIGNIFICANT}g}") for x in array]
        return pd.Series(np.where(small, significant, np.round(array, DISPLAY_DECIMALS)),
                         values.index, name=values.name)

    if isinstance(table, pd.Series):
        return rounded(table) if pd.api.types.is_float_dtype(table.dtype) else table
    table = table.copy()
    for i, dtype in enumerate(table.dtypes):
        if pd.api.types.is_float_dtype(dtype):
            table.iloc[:, i] = rounded(table.iloc[:, i])
    return table


def round_displayed_tables() -> None:
    """Every DataFrame and Series a notebook displays goes through ``display_rounded``."""
    try:
        from IPython import get_ipython
    except ImportError:
        return
    shell = get_ipython()
    if shell is None:
        return
    import pandas as pd
    formatters = shell.display_formatter.formatters
    for kind in (pd.DataFrame, pd.Series):
        formatters["text/plain"].for_type(
            kind, lambda obj, p, cycle: p.text(repr(display_rounded(obj))))
    formatters["text/html"].for_type(
        pd.DataFrame, lambda obj: display_rounded(obj)._repr_html_())


def notebook_setup(profile: str, seeds=None, device: str = "auto",
                   allow_cpu: bool = False) -> Settings:
    """Validate papermill parameters (ValueError naming the parameter) and return the
    settings, the profile resolved; the gpu profile without CUDA stops with its predicted
    CPU time unless ``allow_cpu``."""
    settings = validate_parameters(profile, seeds, device)
    import pandas as pd
    # the chapters' tables carry sentences (a gated verdict's reason): shown whole
    pd.set_option("display.max_colwidth", None)
    round_displayed_tables()
    from .figures import register
    register()  # every figure records its smallest text's size, for the book's check
    if profile == "gpu" and not allow_cpu:
        import torch
        if device == "cpu" or not torch.cuda.is_available():
            from ..studies.driver import cpu_prediction_text
            raise ValueError(f"profile 'gpu' without a CUDA device: "
                             f"{cpu_prediction_text(len(settings.seeds))}; "
                             f"pass allow_cpu=True to train it here anyway")
    return settings
