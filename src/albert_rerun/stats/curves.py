"""How much a layer-to-layer curve oscillates (chapter 7, Figure 1 of the paper).

Figure 1 plots, for each of the 24 layers, the L2 distance and the cosine similarity
between the layer's input and output embeddings: BERT's curves go up and down from layer
to layer, ALBERT's move smoothly. ``oscillation`` measures that: how far the curve
travels against its own overall direction, in units of its range. A curve's total
variation ``TV = sum |x[i+1] - x[i]|`` is its whole path; ``|x[-1] - x[0]|`` is what any
curve from the first value to the last must travel; half the difference is exactly the
distance it moves backwards (TV = forward + backward, net = forward - backward). It is

- 0 for every monotone curve, at any pace (a steady, convex or concave decay or rise);
- 1 for a curve that goes once across its range and back, about one more for each
  further swing, each swing weighed by its depth (float noise on a converged tail adds
  next to nothing, with no tolerance to choose);
- unchanged by ``a x + b`` (``a != 0``) and by reading the layers in reverse, so L2
  distances and angles compare across models; a monotone map (angle to cosine) keeps a
  monotone curve at 0 and keeps every reversal.

What it does not measure: amplitude (a flat curve with small jitter scores as a
zig-zag of the same shape would), nor anything on a curve of three points beyond its
one possible reversal. ``roughness``, the chapter's former measure (mean absolute second
difference over the mean), is kept for comparison: it scores a slowing decay as high as
a zig-zag, so it measures curvature, not oscillation.
"""
from __future__ import annotations

import numpy as np
import pandas as pd


def _curve(values, minimum: int) -> np.ndarray:
    """The values as a float array, after the checks every measure here shares: one
    dimension, finite (a NaN is a broken evaluation, which a smoothness number would
    hide), at least ``minimum`` points."""
    x = np.asarray(values, dtype=float)
    if x.ndim != 1:
        raise ValueError(f"a curve is one-dimensional, got shape {x.shape}")
    if not np.isfinite(x).all():
        bad = np.flatnonzero(~np.isfinite(x)).tolist()
        # positions, not values: a blind study's message must not print its numbers
        raise ValueError(f"the curve has non-finite values at positions {bad} of {len(x)}")
    if len(x) < minimum:
        raise ValueError(f"a curve needs at least {minimum} value(s), got {len(x)}")
    return x


def oscillation(values) -> float:
    """The distance the curve travels against its overall direction, in units of its
    range: ``(sum |diff| - |last - first|) / (2 (max - min))``.

    0 for any monotone curve (steady, convex or concave), 1 for one excursion across
    the range and back, growing with the number and depth of reversals; invariant to
    ``a x + b`` (``a != 0``) and to reversing the curve. Defined values: a constant curve,
    and one of one or two points, cannot reverse and score 0. Errors: an empty curve,
    and NaN or infinite values (ValueError).
    """
    x = _curve(values, 1)
    span = float(np.ptp(x))
    if len(x) < 3 or span == 0.0:
        return 0.0
    backwards = (np.abs(np.diff(x)).sum() - abs(x[-1] - x[0])) / 2
    # float rounding can leave -1e-17 on a monotone curve
    return float(max(backwards, 0.0) / span)


def roughness(values) -> float:
    """The chapter's former measure, kept for comparison only: the mean absolute second
    difference over the layers, divided by the curve's mean. Only a straight line scores
    0: a decline that slows down (convex) scores as high as a zig-zag (the
    stored monotone decays score 0.29-1.21, BERT's zig-zags 0.22-1.53), so it measures
    curvature, not oscillation; ``curves.oscillation`` replaced it."""
    x = np.asarray(values, dtype=float)
    if len(x) < 3:
        return 0.0
    return float(np.abs(np.diff(x, 2)).mean() / max(abs(x.mean()), 1e-12))


def add_roughness(runs: pd.DataFrame) -> pd.DataFrame:
    """Roughness of each run's curves over layers 2..L (the first transition starts from
    the embedding, through the E -> H projection in ALBERT, and is reported apart), for
    the trained model and its untrained control where stored."""
    runs = runs.copy()
    for measure in ("l2", "angle"):
        runs[f"oscillation_{measure}"] = [oscillation(v[1:])
                                          for v in runs[f"transition_{measure}"]]
        runs[f"roughness_{measure}"] = [roughness(v[1:]) for v in runs[f"transition_{measure}"]]
        runs[f"first_{measure}"] = [v[0] for v in runs[f"transition_{measure}"]]
        control = f"control_transition_{measure}"
        if control in runs:
            runs[f"control_roughness_{measure}"] = [
                roughness(v[1:]) if isinstance(v, list) else np.nan for v in runs[control]]
            runs[f"control_oscillation_{measure}"] = [
                oscillation(v[1:]) if isinstance(v, list) else np.nan for v in runs[control]]
    runs["last_angle"] = [v[-1] for v in runs["transition_angle"]]
    return runs
