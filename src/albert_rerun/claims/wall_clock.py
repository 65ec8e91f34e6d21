"""Claim 6 (chapter 6): the wide ALBERT-style model against the BERT-style one at
equal training FLOPs (Table 6)."""
from __future__ import annotations

import pandas as pd

from . import conditions as C
from . import paper
from .decisions import Chapter, MissingRuns, ce_decision, levels, load_runs, margins
from .downstream import downstream
from .text import context_reading, metrics_table, parameter_count, scale_gap, scale_short, summary


def wall_clock(profile: str, seeds=None, device="auto", train_missing=False,
               present: bool = True) -> Chapter:
    """Claim 6 (b): the wide ALBERT-style model against the BERT-style one at equal
    training FLOPs."""
    from .driver import choices_path
    from ..engine.store import read_json
    seeds = seeds or C.default_seeds(profile)
    m = margins(levels(profile))
    choice = read_json(choices_path(profile, "wide-learning-rate"))
    if choice is None:
        if not train_missing:
            raise MissingRuns(f"the wide model's learning-rate sweep is not stored at "
                              f"profile {profile!r}; run `python -m albert_rerun.claims "
                              f"--profile {profile} --claims wall_clock`")
        import contextlib
        import io

        from .driver import wide_learning_rate
        with contextlib.redirect_stdout(io.StringIO()):  # its progress lines carry timings
            wide_learning_rate(profile, device)
        choice = read_json(choices_path(profile, "wide-learning-rate"))
    conditions = C.wall_clock(profile, choice["learning_rate"])
    runs = load_runs(profile, conditions, seeds, device, train_missing)
    chapter = Chapter("wall_clock", runs, wall_clock_decisions(runs, m),
                      extra={"choice": choice, "conditions": conditions})
    flops = {k: C.step_flops(c) * c.max_steps for k, c in conditions.items()}
    chapter.tables["runs"] = metrics_table(runs, {
        "params (M)": pd.Series({k: round(parameter_count(c) / 1e6, 3)
                                 for k, c in conditions.items()}),
        "H": pd.Series({k: c.model.hidden_size for k, c in conditions.items()}),
        "steps": pd.Series({k: c.max_steps for k, c in conditions.items()}),
        "training PFLOPs": pd.Series({k: round(v / 1e15, 3) for k, v in flops.items()})})
    # Measured seconds are kept apart from what the runs computed: they vary from one
    # machine and moment to the next, so a regression test can compare the rest exactly.
    chapter.tables["timing"] = pd.DataFrame({
        "seconds per step": summary(runs, "step_seconds", 1, 4),
        "training seconds": summary(runs, "train_seconds", 1, 0)})
    sweep = pd.DataFrame({"learning rate": [float(k) for k in choice["mlm_loss_at_mask"]],
                          "CE at [MASK] (nats)": list(choice["mlm_loss_at_mask"].values())})
    chapter.tables["sweep"] = sweep.set_index("learning rate").round(4)
    wide, bert = "wide ALBERT-style, equal FLOPs", "BERT-style"
    step = runs.groupby("condition")["step_seconds"].mean()
    chapter.texts.update(
        flops_ratio=f"{C.step_flops(conditions[wide]) / C.step_flops(conditions[bert]):.2f}",
        equal_steps=f"{conditions[wide].max_steps:,}", bert_steps=f"{conditions[bert].max_steps:,}",
        learning_rate=f"{choice['learning_rate']:g}",
        scale_gap=scale_gap(runs, conditions[bert]),
        scale_short=scale_short(runs, conditions[bert]),
        context=context_reading(runs, profile))
    from ..engine.provenance import short_commit
    commits = runs.groupby("condition")["commit"].agg(
        lambda c: ", ".join(sorted(set(c.map(short_commit)))))
    spread = runs.groupby("condition")["step_seconds"].agg(["min", "max"])
    chapter.extra["timing_texts"] = {
        "time_ratio": f"{step[wide] / step[bert]:.2f}",
        "time_range": (f"{spread.loc[wide, 'min']:.3g}-{spread.loc[wide, 'max']:.3g} s per "
                       f"step against {spread.loc[bert, 'min']:.3g}-"
                       f"{spread.loc[bert, 'max']:.3g} s"),
        "time_machines": ", ".join(sorted(set(runs["machine"]))),
        "time_commits": f"the wide runs at {commits[wide]}, the BERT-style runs at "
                        f"{commits[bert]}"}
    return downstream(chapter, profile) if present else chapter


def wall_clock_decisions(runs, m: dict) -> list:
    p = paper.TABLE6
    gap = f"{p['albert-xxlarge'][2] - p['bert-large'][2]:+.1f} Avg (equal time)"
    return [ce_decision(runs, "wall_clock/equal-flops", "wall_clock",
                        "wide ALBERT-style minus BERT-style, equal training FLOPs",
                        "wide ALBERT-style, equal FLOPs", "BERT-style", m["ce"], -1, gap)]
