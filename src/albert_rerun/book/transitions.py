"""Claim 7 (chapter 7): Figure 1's layer transitions (L2 distance and angle between
consecutive layers), trained and at initialization, and how much they oscillate."""
from __future__ import annotations

from dataclasses import replace

import pandas as pd

from ..profiles import ResolvedProfile
from ..stats.curves import add_roughness
from ..stats.inference import decision, paired_t
from ..studies import conditions as C
from ..studies.decisions import T_METHOD, Chapter, ce_decision, gated
from .downstream import downstream
from .plain import chapter_runs
from .text import scale_short


def transitions(profile: ResolvedProfile | str, seeds=None, device="auto",
                train_missing=False, present: bool = True) -> Chapter:
    """Claim 7: Figure 1's layer transitions, trained and at random init."""
    profile, seeds, rungs, m, runs = chapter_runs(profile, C.transitions, seeds, device,
                                                  train_missing)
    runs = add_roughness(runs)
    chapter = Chapter("transitions", runs, gated(transitions_decisions(runs, m), runs, rungs))
    columns = {"first_l2": "first step, L2", "first_angle": "first step, angle",
               "oscillation_l2": "oscillation, L2", "oscillation_angle": "oscillation, angle",
               "last_angle": "last angle"}
    means = runs.groupby("condition", sort=False)
    parts = {"trained": means[list(columns)].mean().rename(columns=columns)}
    if "control_oscillation_l2" in runs:
        controls = means[["control_oscillation_l2", "control_oscillation_angle"]].mean()
        parts["random init"] = controls.set_axis(["oscillation, L2", "oscillation, angle"], axis=1)
    # the controls have no first step: a dash, not NaN, where a table shows them
    chapter.tables["curves"] = pd.concat(parts, names=["state", "model"]).round(3).astype(
        object).fillna("—")
    b = C.transitions(profile)["ALBERT-style"]
    chapter.texts.update(layers=str(b.model.num_hidden_layers), steps=f"{b.max_steps:,}",
                         scale_short=scale_short(runs, b))
    return downstream(chapter, profile) if present else chapter


def flat_counts(runs: pd.DataFrame, tolerance: float = 0.005) -> pd.DataFrame:
    """Per arm, how many trained curves oscillate 0, and the random-init mean oscillation."""
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
    """'11 of 11 on both curves', '10 of 11 for L2, 9 of 11 for the angle'."""
    if arm not in counts.index or not counts.loc[arm, "curves"]:
        return "none stored yet"
    n, l2, angle = (int(counts.loc[arm, k]) for k in ("curves", "flat L2", "flat angle"))
    if l2 == angle:
        return f"{l2} of {n} on both curves"
    return f"{l2} of {n} for L2, {angle} of {n} for the angle"


def oscillation_parts(runs: pd.DataFrame, a: str, b: str) -> pd.DataFrame:
    """``a``'s oscillation minus ``b``'s, trained, at random init and their difference."""
    rows = {}
    for measure in ("l2", "angle"):
        for part, column in (("trained", "oscillation"), ("random init", "control_oscillation"),
                             ("trained minus random init", "change_oscillation")):
            if f"{column}_{measure}" not in runs:
                continue
            table = runs.pivot(index="seed", columns="condition",
                               values=f"{column}_{measure}").reindex(columns=[a, b]).dropna()
            if table.empty:
                continue
            t = paired_t(table[a].to_numpy(), table[b].to_numpy())
            rows[(measure, part)] = {"difference": t["estimate"], "low": t["low"],
                                     "high": t["high"], "seeds": t["n"]}
    index = pd.MultiIndex.from_tuples(list(rows), names=["curve", "part"])
    return pd.DataFrame(list(rows.values()), index=index,
                        columns=["difference", "low", "high", "seeds"])


def transitions_decisions(runs, m: dict) -> list:
    """Smoother under sharing, and no convergence to 0 (the last angle)."""
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
