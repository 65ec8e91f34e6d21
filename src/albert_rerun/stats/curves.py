"""How much a layer-to-layer curve oscillates (chapter 7, the paper's Figure 1: per layer,
the L2 distance and angle between a layer's input and output; BERT's go up and down).

``oscillation`` is the distance a curve travels against its overall direction, in units of
its range: 0 for every monotone curve, 1 for one excursion across the range and back, about
one more per further swing; unchanged by ``a x + b`` and by reversal, so that L2 distances
and angles compare.
"""
from __future__ import annotations

import numpy as np
import pandas as pd


def oscillation(values) -> float:
    """``(sum |diff| - |last - first|) / (2 (max - min))``; 0 for a constant curve or one
    of one or two points; ValueError for an empty one or non-finite values."""
    x = np.asarray(values, dtype=float)
    if x.ndim != 1:
        raise ValueError(f"a curve is one-dimensional, got shape {x.shape}")
    if not np.isfinite(x).all():
        bad = np.flatnonzero(~np.isfinite(x)).tolist()
        # positions, not values: a blind study's message must not print its numbers
        raise ValueError(f"the curve has non-finite values at positions {bad} of {len(x)}")
    if len(x) == 0:
        raise ValueError("a curve needs at least one value")
    span = float(np.ptp(x))
    if len(x) < 3 or span == 0.0:
        return 0.0
    backwards = (np.abs(np.diff(x)).sum() - abs(x[-1] - x[0])) / 2
    # float rounding can leave -1e-17 on a monotone curve
    return float(max(backwards, 0.0) / span)


def add_roughness(runs: pd.DataFrame) -> pd.DataFrame:
    """Oscillation of each run's curves over layers 2..L (the first transition starts
    from the embedding, through ALBERT's E -> H projection, and is reported apart), for
    the trained model and its untrained control where stored."""
    runs = runs.copy()
    for measure in ("l2", "angle"):
        curves = runs[f"transition_{measure}"]
        runs[f"oscillation_{measure}"] = [oscillation(v[1:]) for v in curves]
        runs[f"first_{measure}"] = [v[0] for v in curves]
        control = f"control_transition_{measure}"
        if control in runs:
            runs[f"control_oscillation_{measure}"] = [
                oscillation(v[1:]) if isinstance(v, list) else np.nan for v in runs[control]]
    runs["last_angle"] = [v[-1] for v in runs["transition_angle"]]
    return runs
