"""Claim 6 (chapter 6): the wide ALBERT-style model against the BERT-style one at
equal training time (Table 6's design) and equal training FLOPs."""
from __future__ import annotations

import contextlib
import io

from ..studies import conditions as C
from .. import paper
from ..profiles import ResolvedProfile, resolve
from ..studies.decisions import (Chapter, MissingRuns, arm_levels, available, ce_decision,
                                 gated)
from .downstream import downstream
from .plain import chapter_runs, difference
from .text import scale_short

BERT = "BERT-style"


def wall_clock(profile: ResolvedProfile | str, seeds=None, device="auto",
               train_missing=False, present: bool = True) -> Chapter:
    """Claim 6: the wide ALBERT-style model against the BERT-style one (Table 6)."""
    from ..engine.store import read_json
    from ..stats.inference import gate
    from ..studies.driver import _sweep_choice, wide_learning_rate
    profile = resolve(profile)  # a notebook passes the name
    choice = read_json(_sweep_choice(profile))
    if choice is None:
        if not train_missing or profile.name in C.SWEEP_FROM:
            raise MissingRuns(f"the wide model's learning-rate sweep is not stored for "
                              f"profile {profile.name!r} ({_sweep_choice(profile)}); run "
                              f"`python -m albert_rerun.studies --profile "
                              f"{C.SWEEP_FROM.get(profile.name, profile.name)} --claims "
                              f"wall_clock`")
        with contextlib.redirect_stdout(io.StringIO()):  # its progress lines carry timings
            wide_learning_rate(profile, device)
        choice = read_json(_sweep_choice(profile))
    conditions = C.wall_clock(profile, choice["learning_rate"])
    profile, seeds, rungs, m, runs = chapter_runs(profile, conditions, seeds, device,
                                                  train_missing)
    wides = [k for k in conditions if k != BERT and available(runs, k, BERT)]
    if not wides:
        raise MissingRuns(f"no wide run of profile {profile.name!r} is complete beside the "
                          f"BERT-style runs")
    conditions = {k: c for k, c in conditions.items() if k in set(runs["condition"])}
    budget = C.equal_time_steps(profile)
    chapter = Chapter("wall_clock", runs,
                      gated(wall_clock_decisions(runs, wides, m), runs, rungs),
                      extra={"choice": choice, "conditions": conditions, "budget": budget})
    wide = wides[0]  # the equal-time arm where the profile has it
    chapter.texts.update(
        flops_ratio=f"{C.step_flops(conditions[wide]) / C.step_flops(conditions[BERT]):.2f}",
        equal_steps=f"{conditions[wide].max_steps:,}",
        bert_steps=f"{conditions[BERT].max_steps:,}",
        equal_flops_steps=f"{C.equal_flops_steps(profile):,}",
        budget_seconds=f"{budget['bert_seconds']:,.0f}",
        learning_rate=f"{choice['learning_rate']:g}",
        levels=gate(arm_levels(runs, conditions, rungs))["arm_levels"],
        scale_short=scale_short(runs, conditions[BERT]))
    # seconds vary with the machine: kept apart; medians, as one slowed run moves a mean
    median = runs.groupby("condition")[["step_seconds", "train_seconds"]].median()
    chapter.extra["timing"] = (median.loc[wide] / median.loc[BERT]).round(2).rename(
        {"step_seconds": "step_ratio", "train_seconds": "seconds_ratio"})
    return downstream(chapter, profile) if present else chapter


def wall_clock_decisions(runs, wides, m: dict) -> list:
    """The wide model minus the BERT-style one, once per budget in ``wides``."""
    p = paper.TABLE6
    keys = {"wide ALBERT-style, equal time": (
                "equal-time", "time",
                f"{p['albert-xxlarge'][2] - p['bert-large'][2]:+.1f} Avg (equal time)"),
            "wide ALBERT-style, equal FLOPs": (
                "equal-flops", "FLOPs", "none (Table 6 is at equal time only)")}
    return [ce_decision(runs, f"wall_clock/{keys[w][0]}", "wall_clock",
                        f"wide ALBERT-style minus BERT-style, equal training {keys[w][1]}",
                        w, BERT, m["ce"], -1, keys[w][2]) for w in wides]


def short_time(rung: str = "16x", tables: dict | None = None) -> dict:
    """The seeds at ``rung`` where the wide model got under 0.9 of the BERT-style seconds."""
    from ..studies import ladder
    if tables is None:
        try:
            tables = ladder.result_tables()[0]
        except Exception:  # NotComplete, or no ladder store at this checkout
            return {"short": "—", "seeds": "—", "ratios": "—"}
    ratios = tables["time ratios"]
    at = ratios.loc[ratios["rung"] == rung, "wide / BERT-style seconds"]
    short = at[at < 0.9]
    return {"short": str(len(short)), "seeds": str(len(at)),
            "ratios": ", ".join(f"{r:.2f}" for r in short) or "none"}


def step_interval(t, span: str = "4x-16x") -> str:
    """A ``paper_side`` trend's slope over ``span`` with its 95% interval; '—' before."""
    if t.table is None:
        return "—"
    r = t.table
    ends = t.interval(r[span], r[f"{span} low"], r[f"{span} high"])
    return difference(*ends, t.unit, unit_first=False)
