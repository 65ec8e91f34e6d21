"""Claim 7 (chapter 7): Figure 1's layer transitions (L2 distance and angle between
consecutive layers), trained and at initialization, and their roughness."""
from __future__ import annotations

import numpy as np
import pandas as pd

from . import conditions as C
from .decisions import T_METHOD, Chapter, ce_decision, levels, load_runs, margins
from .downstream import downstream
from .stats import decision, paired_t
from .text import context_reading, scale_gap, scale_short


def transitions(profile: str, seeds=None, device="auto", train_missing=False,
                present: bool = True) -> Chapter:
    """Claim 7: Figure 1's layer transitions, trained and at initialization."""
    seeds = seeds or C.default_seeds(profile)
    m = margins(levels(profile))
    conditions = C.transitions(profile)
    runs = add_roughness(load_runs(profile, conditions, seeds, device, train_missing))
    chapter = Chapter("transitions", runs, transitions_decisions(runs, m))
    rows = []
    for state, prefix in (("trained", ""), ("random init", "control_")):
        for name in conditions:
            part = runs[runs["condition"] == name].dropna(subset=[f"{prefix}roughness_l2"]) \
                if f"{prefix}roughness_l2" in runs else runs.iloc[:0]
            if part.empty:
                continue
            rows.append({"model": name, "state": state, "seeds": len(part),
                         "first step, L2": part[f"{prefix}transition_l2"].map(
                             lambda v: v[0]).mean(),
                         "first step, angle": part[f"{prefix}transition_angle"].map(
                             lambda v: v[0]).mean(),
                         "roughness, L2": part[f"{prefix}roughness_l2"].mean(),
                         "roughness, angle": part[f"{prefix}roughness_angle"].mean(),
                         "last angle": part[f"{prefix}transition_angle"].map(
                             lambda v: v[-1]).mean()})
    chapter.tables["roughness"] = pd.DataFrame(rows).set_index(["model", "state"]).round(3)
    b = conditions["ALBERT-style"]
    chapter.texts["convergence"] = convergence_text(runs, m["angle"])
    chapter.texts.update(layers=str(b.model.num_hidden_layers), steps=f"{b.max_steps:,}",
                         scale_gap=scale_gap(runs, b), scale_short=scale_short(runs, b),
                         context=context_reading(runs, profile))
    return downstream(chapter, profile) if present else chapter


def roughness(values) -> float:
    """How jumpy a layer-to-layer curve is: the mean absolute second difference over
    the layers, divided by the curve's mean (scale-free, so L2 and angles compare
    across models). A steady rise or decline scores 0; only changes of direction or
    of pace count."""
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
        runs[f"roughness_{measure}"] = [roughness(v[1:]) for v in runs[f"transition_{measure}"]]
        runs[f"first_{measure}"] = [v[0] for v in runs[f"transition_{measure}"]]
        control = f"control_transition_{measure}"
        if control in runs:
            runs[f"control_roughness_{measure}"] = [
                roughness(v[1:]) if isinstance(v, list) else np.nan for v in runs[control]]
    runs["last_angle"] = [v[-1] for v in runs["transition_angle"]]
    return runs


def convergence_text(runs: pd.DataFrame, margin: float) -> str:
    """What the ALBERT-style model's angle curve does over the layers (mean over seeds):
    whether, and from which layer, it stays within ``margin`` degrees of 0."""
    curves = np.array(runs[runs["condition"] == "ALBERT-style"]["transition_angle"].tolist())
    angle = curves.mean(0)
    within = np.flatnonzero(angle < margin)
    text = (f"The ALBERT-style model's angle between consecutive layers falls from "
            f"{angle[0]:.1f} degrees at the first layer to {angle[-1]:.2g} at the last")
    if len(within) and within[0] < len(angle) - 1 and (angle[within[0]:] < margin).all():
        return text + (f": within the {margin:g}-degree margin of 0 from layer "
                       f"{within[0] + 1} on, so at this scale its embeddings converge to a "
                       f"fixed point, as a deep equilibrium model's do, which is what the "
                       f"paper says ALBERT's do not (the decision's \"equivalent\" is this "
                       f"convergence, against the paper)")
    return text + ", so it does not converge to 0 within the layers trained"


def transitions_decisions(runs, m: dict) -> list:
    out = [ce_decision(runs, f"transitions/roughness-{measure}", "transitions",
                       f"roughness of the {name} curve, BERT-style minus ALBERT-style",
                       "BERT-style", "ALBERT-style", m["roughness"], +1,
                       "ALBERT smoother (no numbers)", metric=f"roughness_{measure}")
           for measure, name in (("l2", "L2"), ("angle", "angle"))]
    last = runs[runs["condition"] == "ALBERT-style"].sort_values("seed")["last_angle"]
    out.append(decision("transitions/last-angle", "transitions",
                        "ALBERT-style last layer's angle (degrees)",
                        paired_t(last.to_numpy(), None, m["angle"]), m["angle"], +1,
                        "degrees", T_METHOD, "does not converge to 0"))
    return out
