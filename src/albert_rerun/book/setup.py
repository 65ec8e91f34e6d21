"""A notebook's first call: its papermill parameters validated, and the gpu profile
stopped on a machine without a CUDA device (with its predicted time there).

The validation itself is configuration (``profiles.validate_parameters``); the
prediction reads the driver's plan and the stored throughput, which is why this check
lives here, above the profiles, rather than in them.
"""
from __future__ import annotations

from ..profiles import Settings, validate_parameters


# The precision a displayed table's floats are read at : three decimals, as
# the book's prose gives cross-entropies in nats; a number below 0.01 keeps two
# significant digits; a column in percent (its label ends in "%") one decimal, the points
# the prose gives accuracies in. The last digits of six-digit floats differ between CPUs (another OpenBLAS
# or ATen kernel, another thread count) and mean nothing to a reader; a change of result
# still moves the rounded number, which nbval then catches.
DISPLAY_DECIMALS = 3
SMALL_SIGNIFICANT = 2
PERCENT_DECIMALS = 1


def display_rounded(table):
    """``table`` (a DataFrame or Series) with its float values rounded for display
    (``DISPLAY_DECIMALS``; ``SMALL_SIGNIFICANT`` digits below 0.01; a column whose
    label ends in "%" ``PERCENT_DECIMALS``); its index, its labels and every other
    column as they are."""
    import numpy as np
    import pandas as pd

    def rounded(values: pd.Series) -> pd.Series:
        array = values.to_numpy(dtype=float, copy=True)
        label = values.name[-1] if isinstance(values.name, tuple) else values.name
        if str(label).rstrip().endswith("%"):
            return pd.Series(np.round(array, PERCENT_DECIMALS), index=values.index,
                             name=values.name)
        small = np.isfinite(array) & (array != 0) & (np.abs(array) < 0.01)
        array[~small] = np.round(array[~small], DISPLAY_DECIMALS)
        for i in np.flatnonzero(small):
            array[i] = float(f"{array[i]:.{SMALL_SIGNIFICANT}g}")
        return pd.Series(array, index=values.index, name=values.name)

    if isinstance(table, pd.Series):
        return rounded(table) if pd.api.types.is_float_dtype(table.dtype) else table
    floats = [i for i, dtype in enumerate(table.dtypes) if pd.api.types.is_float_dtype(dtype)]
    if not floats:
        return table
    table = table.copy()
    for i in floats:
        table.iloc[:, i] = rounded(table.iloc[:, i])
    return table


def round_displayed_tables() -> None:
    """Every DataFrame and Series a notebook displays (text/plain and text/html, the two
    outputs nbval compares and the book shows) goes through ``display_rounded``; the
    objects themselves keep their full precision. Outside IPython: nothing."""
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
    """Validate papermill parameters; raise ValueError naming the parameter.

    The profile's name (a papermill parameter is a string) is resolved here, once:
    ``settings.profile`` is its ``profiles.ResolvedProfile``, ``settings.profile.name``
    the name. ``seeds=None`` means the profile's default number of seeds. The gpu profile without
    a CUDA device stops with the predicted training time of its runs on this CPU, unless
    ``allow_cpu``.
    """
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
