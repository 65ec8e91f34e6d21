"""Claim 7 (chapter 7): Figure 1's layer transitions (L2 distance and angle between
consecutive layers), trained and at initialization, and how much they oscillate
(``curves.oscillation``; the former roughness measure is kept for comparison only: it
scores monotone decays as high as zig-zags)."""
from __future__ import annotations

import numpy as np
import pandas as pd

from ..studies import conditions as C
from dataclasses import replace

from ..profiles import ResolvedProfile, resolve
from ..stats.curves import add_roughness
from ..studies.decisions import CE, T_METHOD, Chapter, ce_decision, gated, levels, load_runs, margins
from .downstream import downstream
from ..stats.inference import arm_level, decision, paired_t
from .text import context_reading, scale_gap, scale_short


def transitions(profile: ResolvedProfile | str, seeds=None, device="auto",
                train_missing=False, present: bool = True) -> Chapter:
    """Claim 7: Figure 1's layer transitions, trained and at initialization."""
    profile = resolve(profile)  # a notebook passes the name
    seeds = seeds or C.default_seeds(profile)
    rungs = levels(profile)
    m = margins(rungs)
    conditions = C.transitions(profile)
    runs = add_roughness(load_runs(profile, conditions, seeds, device, train_missing))
    chapter = Chapter("transitions", runs,
                      gated(transitions_decisions(runs, m), runs, rungs))
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
                         "oscillation, L2": part[f"{prefix}oscillation_l2"].mean(),
                         "oscillation, angle": part[f"{prefix}oscillation_angle"].mean(),
                         "former roughness, L2": part[f"{prefix}roughness_l2"].mean(),
                         "former roughness, angle": part[f"{prefix}roughness_angle"].mean(),
                         "last angle": part[f"{prefix}transition_angle"].map(
                             lambda v: v[-1]).mean()})
    chapter.tables["roughness"] = pd.DataFrame(rows).set_index(["model", "state"]).round(3)
    b = conditions["ALBERT-style"]
    chapter.extra["convergence"] = convergence(runs, m["angle"], rungs)
    chapter.texts.update(layers=str(b.model.num_hidden_layers), steps=f"{b.max_steps:,}",
                         scale_gap=scale_gap(runs, b, "transitions"),
                         scale_short=scale_short(runs, b),
                         context=context_reading(runs, profile))
    return downstream(chapter, profile) if present else chapter


def convergence(runs: pd.DataFrame, margin: float, rungs: dict) -> dict:
    """What the ALBERT-style model's angle curve does over the layers (mean over seeds),
    beside whether the model has learned at all: a model that does not read context at
    [MASK] has collapsed, and its layers' curves say nothing about Figure 1's claim,
    whatever their shape. ``converges_from``: the first layer (1-based) from which every
    angle lies within ``margin`` of 0, None where none does."""
    albert = runs[runs["condition"] == "ALBERT-style"]
    angle = np.array(albert["transition_angle"].tolist()).mean(0)
    ce = float(albert[CE].mean())
    standing = arm_level("ALBERT-style", ce, rungs)
    within = np.flatnonzero(angle < margin)
    converges = (len(within) and within[0] < len(angle) - 1
                 and bool((angle[within[0]:] < margin).all()))
    return {"first_angle": float(angle[0]), "last_angle": float(angle[-1]),
            "layers": len(angle), "ce": ce,
            "unigram": rungs["rungs"]["unigram_loss_at_mask"],
            "level": 100 * standing.level,
            "accuracy": 100 * float(albert["mlm_accuracy_at_mask"].mean()),
            "reads_context": bool(standing.reads_context),
            "converges_from": int(within[0]) + 1 if converges else None}


def flat_counts(runs: pd.DataFrame, tolerance: float = 0.005) -> pd.DataFrame:
    """Per arm, how many trained curves score an oscillation of 0 (below ``tolerance``:
    0.00 to two decimals, so that float noise on a converged tail counts as flat) on the
    L2 and on the angle curve, out of how many, and the mean oscillation of the
    random-init controls where stored: with few layers a curve has few points (three at 4 layers,
    the first transition left out), and three points reverse at most once, so most
    trained curves score 0 and a difference of means rests on the few that do not, or
    on the untrained controls."""
    rows = {}
    for arm, part in runs.groupby("condition", sort=False):
        rows[arm] = {"curves": len(part),
                     "flat L2": int((part["oscillation_l2"] < tolerance).sum()),
                     "flat angle": int((part["oscillation_angle"] < tolerance).sum())}
        for measure in ("l2", "angle"):
            if f"control_oscillation_{measure}" in part:
                rows[arm][f"random init, mean {measure}"] = round(
                    float(part[f"control_oscillation_{measure}"].mean()), 2)
    return pd.DataFrame.from_dict(rows, orient="index") if rows else \
        pd.DataFrame(columns=["curves", "flat L2", "flat angle"])


def flat_phrase(counts: pd.DataFrame, arm: str) -> str:
    """'11 of 11 on both curves' or '10 of 11 for L2, 9 of 11 for the angle': an arm's
    row of ``flat_counts`` as a short phrase; 'none stored yet' without it."""
    if arm not in counts.index or not counts.loc[arm, "curves"]:
        return "none stored yet"
    n, l2, angle = (int(counts.loc[arm, k]) for k in ("curves", "flat L2", "flat angle"))
    if l2 == angle:
        return f"{l2} of {n} on both curves"
    return f"{l2} of {n} for L2, {angle} of {n} for the angle"


def transitions_decisions(runs, m: dict) -> list:
    """Smoother under sharing (oscillation of the BERT-style model's curve minus the
    ALBERT-style model's, L2 and angle; paper: positive), and no convergence to 0 (the
    ALBERT-style model's last-layer angle; paper: above 0)."""
    out = [ce_decision(runs, f"transitions/oscillation-{measure}", "transitions",
                       f"oscillation of the {name} curve, BERT-style minus ALBERT-style",
                       "BERT-style", "ALBERT-style", m["oscillation"], +1,
                       "ALBERT smoother (no numbers)", metric=f"oscillation_{measure}",
                       unit="ranges")
           for measure, name in (("l2", "L2"), ("angle", "angle"))]
    last = runs[runs["condition"] == "ALBERT-style"].sort_values("seed")["last_angle"]
    out.append(replace(decision("transitions/last-angle", "transitions",
                                "ALBERT-style last layer's angle (degrees)",
                                paired_t(last.to_numpy(), None, m["angle"]), m["angle"], +1,
                                "degrees", T_METHOD, "does not converge to 0"),
                       arms=("ALBERT-style",)))
    return out
