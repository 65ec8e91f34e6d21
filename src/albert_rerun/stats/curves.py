"""How much a layer-to-layer curve oscillates (chapter 7, Figure 1 of the paper).

Figure 1 plots, for each of the 24 layers, the L2 distance and the cosine similarity
between the layer's input and output embeddings: BERT's curves go up and down from layer
to layer, ALBERT's move smoothly. The chapter needs one number per curve that separates
those two shapes.

The chapter's former measure, ``roughness`` (mean absolute second
difference over the curve's mean), cannot: a monotone decay that slows down has large
second differences, so the stored cpu curves that only decay score 0.29-1.21 on it, as
much as BERT-style zig-zags (0.22-1.53). It measures curvature, not oscillation.

``oscillation`` measures what Figure 1 shows instead: how far the curve travels
against its own overall direction. A curve's total variation ``TV = sum |x[i+1] - x[i]|``
is its whole path length; ``|x[-1] - x[0]|`` is the part any curve from the first value
to the last must travel; the difference, halved, is exactly the distance it moves
backwards (TV = forward + backward, net = forward - backward). Divided by the curve's
range, it counts in "ranges travelled backwards":

- 0 for every monotone curve, at any pace: a steady, convex or concave decay or rise;
- 1 for a curve that goes once across its range and back (0, 1, 0), and about one more
  for each further full swing, so it grows with the number and the depth of zig-zags;
- unchanged by the scale and offset of the values (``a x + b``, ``a != 0``) and by
  reading the layers in reverse, so L2 distances (units of the hidden state) and angles
  (degrees) compare across models and measures. The paper plots cosine similarity, the
  evaluation stores the angle (degrees, the arccos of it): a monotone map keeps a
  monotone curve at 0 and keeps every reversal, and changes the value only as far as it
  is non-linear over the curve's range (on the stored cpu curves, angle 1.72 / 1.00 /
  1.38 against cos(angle) 1.89 / 0.94 / 1.29 for the three BERT-style seeds).

Why not the count of sign changes of the first difference (``reversals``, kept beside
it for the prose): it ignores how deep a swing is, so float noise at 1e-7 on a curve
that has converged counts as much as a 50-degree swing, unless a tolerance is chosen;
and over 11 transitions it takes a dozen integer values, too coarse for a paired
difference over three seeds. The total-variation measure weighs each swing by its
depth and needs no tolerance: a wiggle of 1e-7 on a curve whose range is 0.4 adds 1e-6.

What it does not measure: amplitude. Scale invariance means a flat curve with small
random jitter (an untrained BERT-style stack, whose layers are independent draws)
scores as a zig-zag of the same shape would; ``swing`` (range over mean level) gives the
size of the movement where the prose needs it.
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


def reversals(values, tolerance: float = 0.01) -> int:
    """How many times the curve changes direction: sign changes of the first difference,
    after dropping the steps smaller than ``tolerance`` times the range (so float noise on
    a flat stretch is not counted; a dropped step does not break a run of one sign).
    0 for a monotone or constant curve; same input checks as ``oscillation``."""
    if not 0 <= tolerance < 1:
        raise ValueError(f"tolerance is a share of the range in [0, 1), got {tolerance}")
    x = _curve(values, 1)
    steps = np.diff(x)
    steps = steps[np.abs(steps) > tolerance * np.ptp(x)] if len(steps) else steps
    signs = np.sign(steps)
    return int((signs[1:] != signs[:-1]).sum())


def swing(values) -> float:
    """The curve's range over the absolute value of its mean: how large its movement is
    beside its level, the amplitude that ``oscillation`` leaves out. Needs a non-zero
    mean (ValueError otherwise)."""
    x = _curve(values, 1)
    level = abs(float(x.mean()))
    if level == 0.0:
        raise ValueError("the curve's mean is 0: its swing relative to its level is undefined")
    return float(np.ptp(x) / level)


def curve_table(runs, measures=("l2", "angle"), skip_first: bool = True):
    """Per run (condition, seed) and state (trained, and the untrained control where
    stored), each measure's oscillation, reversals and swing, beside
    ``roughness`` for comparison. ``runs`` is ``decisions.load_runs``'s frame
    of the transition runs (columns ``transition_<measure>`` and
    ``control_transition_<measure>``, lists over layers). ``skip_first``: leave out the
    first transition, as the chapter does (it starts from the embedding output, through
    the E -> H projection in ALBERT)."""
    import pandas as pd

    rows = []
    for _, run in runs.iterrows():
        for state, prefix in (("trained", ""), ("random init", "control_")):
            for measure in measures:
                curve = run.get(f"{prefix}transition_{measure}")
                if not isinstance(curve, (list, tuple, np.ndarray)):
                    continue
                curve = list(curve)[1:] if skip_first else list(curve)
                rows.append({"model": run["condition"], "seed": int(run["seed"]),
                             "state": state, "measure": measure,
                             "oscillation": oscillation(curve),
                             "reversals": reversals(curve),
                             "swing": swing(curve) if np.mean(curve) != 0 else np.nan,
                             "roughness": roughness(curve)})
    return pd.DataFrame(rows)


def roughness(values) -> float:
    """The chapter's former measure, kept for comparison only: the mean absolute second
    difference over the layers, divided by the curve's mean. Only a straight line scores
    0: a decline that slows down (convex) scores as high as a zig-zag (review: the
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
