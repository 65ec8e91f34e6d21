"""TEMPORARY: the compute ladder's keys for the introduction until the ladder's own
provider lands (it replaces this module; delete it then, and its line in
``book.values.PROVIDERS``). Each decision's mean and 95% interval at 1x, 4x and 16x,
paper-positive; the two steps in words; dropout's change from 1x to 16x split into its
training and gap parts; the 64x pilot's sharing cost.
"""
from __future__ import annotations

import math

from ..studies.decisions import interval_text, signed

NAMES = {"asymmetry": "confirm/asymmetry", "sharing": "confirm/sharing-cost",
         "sop": "confirm/sop", "dropout": "confirm/dropout",
         "equal_time": "confirm/equal-time"}


def _word(low: float, high: float) -> str:
    return "rose" if low > 0 else "fell" if high < 0 else "no change shown"


def values(profile) -> dict:
    from . import ladder_trend
    trends = ladder_trend.gather(chapter_signs=False)
    out = {}
    for name, key in NAMES.items():
        t, s = trends[key], trends[key].paper_sign
        r = t.table
        for rung in ("1x", "4x", "16x"):
            if r is None or not math.isfinite(r[f"{rung} low"]):
                out[f"ladder_{name}_{rung}"] = "not run yet"
                continue
            ends = sorted((s * r[f"{rung} low"], s * r[f"{rung} high"]))
            out[f"ladder_{name}_{rung}"] = interval_text(s * r[f"{rung} mean"], *ends, t.unit)
        if r is None:
            out[f"ladder_{name}_steps"] = "not run yet"
        else:
            words = [_word(*sorted((s * r[f"{step} low"], s * r[f"{step} high"])))
                     for step in ("1x-4x", "4x-16x")]
            out[f"ladder_{name}_steps"] = f"1x to 4x: {words[0]}; 4x to 16x: {words[1]}"
    dropout = trends[NAMES["dropout"]]
    if dropout.table is not None and dropout.gap:
        # the change from 1x to 16x, split into its training-loss and gap parts
        gap = dropout.gap["16x"][0] - dropout.gap["1x"][0]
        change = dropout.table["16x mean"] - dropout.table["1x mean"]
        out["ladder_dropout_gap_part"] = signed(gap, 3)
        out["ladder_dropout_training_part"] = signed(change - gap, 3)
    else:
        out["ladder_dropout_gap_part"] = out["ladder_dropout_training_part"] = "not run yet"
    out["pilot_sharing_64x"] = _pilot()
    return out


def _pilot() -> str:
    from ..studies import long_pilot
    from ..studies.confirm_design import NotComplete
    try:
        runs = long_pilot.frame().set_index("condition")
    except NotComplete:
        return "not run yet"
    shared, bert = long_pilot.ARMS
    return signed(float(runs.loc[shared, long_pilot.CE] - runs.loc[bert, long_pilot.CE]), 3)
