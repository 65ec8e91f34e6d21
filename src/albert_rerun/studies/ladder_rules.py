"""The compute ladder's readings and the checks of what enters them (book/ladder.md):
the registered reading of a slope, section 4's rule for a decision left with too few
seeds, and amendment 5's handling of non-finite numbers.

- ``trend_reading``: toward the paper's sign, away from it, or no trend shown, after
  Holm; ``NOT_COMPUTED`` where a decision has fewer than ``MIN_SEEDS_TO_ANALYSE`` paired
  seeds at a rung (amendment 5: the decision gets no slope and enters Holm's family
  with p = 1, so the family stays five and no other adjusted p shrinks).
- ``differences``: each rung's per-seed paired differences, non-finite ones dropped.
- ``nonfinite_runs``: the stored runs whose held-out or training cross-entropy is not
  finite, and ``without_runs``, which takes them out of every table, as a diverged run
  is (amendments 5 and 6); the page lists them.
- ``first_rung_learning_order``: the first rung where order counts as learned.

It sits below ``ladder`` (which imports it), so that module keeps the registered names
(``ladder.trend_reading``) without growing past the architecture's limit.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from . import confirm_analysis, confirm_design

ALPHA = 0.05
MIN_SEEDS_TO_ANALYSE = 3
TOWARD, AWAY, NO_TREND = ("moves toward the paper's sign", "moves away from the paper's sign",
                          "no trend shown")
NOT_COMPUTED = "not computed"


def trend_reading(estimate: float, p_holm: float, paper_sign: int) -> str:
    """The registered reading of a slope: toward the paper's sign, away from it, or no
    trend shown (Holm-adjusted p at or above ALPHA, or no slope)."""
    if not p_holm < ALPHA or not estimate or not np.isfinite(estimate):
        return NO_TREND
    return TOWARD if np.sign(estimate) == paper_sign else AWAY


def too_few(d: dict, rungs) -> list:
    """The rungs of ``rungs`` where ``d`` ({rung: paired differences}) has fewer than
    MIN_SEEDS_TO_ANALYSE values: a decision with any gets no slope."""
    return [r for r in rungs if len(d.get(r, ())) < MIN_SEEDS_TO_ANALYSE]


def differences(frames: dict, spec) -> dict:
    """{rung: per-seed paired differences of ``spec``, finite ones only} of the rungs in
    ``frames`` that hold the decision's metric (a rung with none is left out)."""
    out = {}
    for rung, frame in frames.items():
        if spec.kind == "change":  # the transition measures, for the decisions of change
            frame = confirm_analysis.with_changes(frame)
        try:
            d = confirm_analysis.per_seed(spec, frame)
        except KeyError:  # a metric the rung's store does not hold
            continue
        d = d.to_numpy(dtype=float)
        d = d[np.isfinite(d)]
        if len(d):
            out[rung] = d
    return out


# the stored numbers of every arm that enter the ladder's tables (``rung_frame``'s
# columns); the cue-free accuracies are strings of 0 and 1, finite by construction
CHECKED = (confirm_design.CE, "train_mlm_loss_at_mask")


def nonfinite_runs(frames: dict) -> pd.DataFrame:
    """One row per stored run (rung, arm, seed) with a number of CHECKED that is NaN or
    infinite, and which ("number", joined by ", ")."""
    rows = []
    for rung, frame in frames.items():
        columns = [c for c in CHECKED if c in frame]
        for _, r in frame.iterrows():
            bad = [c for c in columns if not np.isfinite(float(r[c]))]
            if bad:
                rows.append({"rung": rung, "arm": r["condition"], "seed": int(r["seed"]),
                             "number": ", ".join(bad)})
    return pd.DataFrame(rows, columns=["rung", "arm", "seed", "number"])


def without_runs(frames: dict, runs: pd.DataFrame) -> dict:
    """``frames`` less the rows of ``runs`` (rung, arm, seed): out of every table, as a
    diverged run, which has no row, is."""
    out = {}
    for rung, frame in frames.items():
        drop = runs[runs["rung"] == rung]
        gone = set(zip(drop["arm"], drop["seed"]))
        keep = [(c, int(s)) not in gone for c, s in zip(frame["condition"], frame["seed"])]
        out[rung] = frame[keep].reset_index(drop=True) if gone else frame
    return out


def first_rung_learning_order(table: pd.DataFrame) -> str | None:
    """The first rung at which order counts as learned (``sop_by_rung``), or None."""
    learned = [rung for rung, ok in table["order learned"].items() if ok]
    return learned[0] if learned else None
