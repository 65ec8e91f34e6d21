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


def cpu_name(name: str) -> str:
    """A CPU as provenance records it, less its marks: 'Intel(R) Xeon(R) Processor' ->
    'Intel Xeon'."""
    import re
    return re.sub(r"\s*\((R|TM)\)|\s+(Processor|CPU)\b", "", name).strip()


def timing_cpus(rung: str = "16x", tables: dict | None = None, frame=None,
                record: dict | None = None) -> dict:
    """Where the equal-time pairs at ``rung`` ran. Both step counts were fixed from one
    timing (the confirmatory equal-time record), so a pair run on another CPU is not at
    equal time: those pairs' seconds ratios, and the paper-positive advantage (BERT-style
    minus wide, nats) of the pairs on the timing CPU."""
    from ..studies import confirm_analysis as A
    from ..studies import ladder
    from ..studies.decisions import signed
    record = record or A.equal_time_record()
    try:
        tables = tables if tables is not None else ladder.result_tables()[0]
        frame = frame if frame is not None else ladder.rung_frames()[rung]
    except Exception:  # NotComplete, or no ladder store at this checkout
        tables = None
    if tables is None or record is None:
        return dict.fromkeys(("timed", "other", "other_cpu", "other_ratios", "same"), "—")
    timed = record["provenance"]["machine"]["cpu"]
    ratios = tables["time ratios"]
    at = ratios[ratios["rung"] == rung].set_index("seed")
    other = at[at["machines"] != timed]
    ce = frame.pivot(index="seed", columns="condition", values=A.CE)
    same = (ce[A.BERT] - ce[A.WIDE]).loc[at.index.difference(other.index)]
    return {"timed": cpu_name(timed), "other": f"{len(other)} of {len(at)}",
            "other_cpu": " and ".join(sorted({cpu_name(m) for m in other["machines"]}))
            or "none",
            "other_ratios": ", ".join(f"{r:.2f}" for r in other["wide / BERT-style seconds"])
            or "none",
            "same": ", ".join(signed(d, 3) for d in same) + " nats" if len(same) else "none"}


def step_interval(t, span: str = "4x-16x") -> str:
    """A ``paper_side`` trend's slope over ``span`` with its 95% interval; '—' before."""
    if t.table is None:
        return "—"
    r = t.table
    ends = t.interval(r[span], r[f"{span} low"], r[f"{span} high"])
    return difference(*ends, t.unit, unit_first=False)
