"""Claim 4 (chapter 4): Table 5 through the probes (SOP against NSP), and the
topic-only baseline."""
from __future__ import annotations

import pandas as pd

from . import conditions as C
from . import paper
from .decisions import (Chapter, accuracy_decision, available, gated, levels, load_runs,
                        margins, stored_baseline)
from .downstream import downstream
from .text import context_reading, metrics_table, scale_gap, scale_short, summary


def sop_nsp(profile: str, seeds=None, device="auto", train_missing=False,
            present: bool = True, topic_seeds=None, partial: bool = False) -> Chapter:
    """Claim 4: Table 5 through the probes, and the topic-only baseline."""
    from ..profiles import eval_config
    from .baselines import TOPIC_TRAIN_PAIRS, topic_baseline
    seeds = seeds or C.default_seeds(profile)
    rungs = levels(profile)
    m = margins(rungs)
    runs = load_runs(profile, C.sop_nsp(profile), seeds, device, train_missing,
                     partial=partial)
    evaluation = eval_config(profile)
    pairs = TOPIC_TRAIN_PAIRS[profile]
    topic = pd.DataFrame([stored_baseline(profile, f"topic-{task}-{seed}", topic_baseline,
                                          task, evaluation, pairs, seed)
                          for task in ("nsp", "sop") for seed in (topic_seeds or seeds)])
    chapter = Chapter("sop_nsp", runs, gated(sop_nsp_decisions(runs, topic, m), runs, rungs),
                      extra={"topic": topic})
    table = metrics_table(runs, {
        "SOP, own head %": summary(runs, "sop_accuracy_head", 100, 1),
        "SOP, probe %": summary(runs, "sop_accuracy_probe", 100, 1),
        "NSP, own head %": summary(runs, "nsp_accuracy_head", 100, 1),
        "NSP, probe %": summary(runs, "nsp_accuracy_probe", 100, 1)})
    table["paper MLM / NSP / SOP"] = [" / ".join(map(str, paper.TABLE5[k][:3]))
                                      for k in table.index]
    table.index.name = "trained with"
    chapter.tables["objectives"] = table
    topic_table = topic.groupby("task").agg(accuracy=("accuracy", "mean"),
                                            majority=("majority", "first"),
                                            train_pairs=("train_pairs", "first"),
                                            test_pairs=("test_pairs", "first"))
    topic_table[["accuracy", "majority"]] *= 100
    chapter.tables["topic"] = topic_table.round(1)
    chapter.texts.update(
        scale_gap=scale_gap(runs, C.base(profile), "sop_nsp"),
        scale_short=scale_short(runs, C.base(profile)),
        context=context_reading(runs, profile),
        majority=(f"The held-out pairs are {100 * runs['sop_majority'].iloc[0]:.1f}% one label "
                  f"(SOP) and {100 * runs['nsp_majority'].iloc[0]:.1f}% (NSP)."))
    if present:  # what the bag of words reads (a finding of the book; no model involved)
        from .baselines import bag_of_words_findings, findings_tables
        findings = stored_baseline(profile, "bag-of-words-findings", bag_of_words_findings,
                                   profile)
        chapter.extra["bow"] = findings_tables(findings)
        chapter.texts["bow"] = findings["text"]
        chapter.texts["bow_vs_probe"] = probe_beside_bag(runs, topic)
    return downstream(chapter, profile) if present else chapter


def probe_beside_bag(runs, topic) -> str:
    """The SOP-trained model's probe on SOP pairs beside the bag of words on the same test
    pairs (review: the decision's gain over NSP may use the cut cue the bag reads)."""
    sop = runs.loc[runs["condition"] == "sop", "sop_accuracy_probe"]
    bag = topic.loc[topic["task"] == "sop", "accuracy"]
    if sop.empty or bag.empty:
        return ""
    return (f"The SOP-trained model's probe scores {100 * sop.mean():.1f}% on the SOP pairs, "
            f"{100 * (sop.mean() - bag.mean()):+.1f} points beside the bag of words' "
            f"{100 * bag.mean():.1f}% on the same pairs: the cue the bag reads is open to a "
            f"trained model too, so the SOP decision's gain over the NSP-trained model may "
            f"be partly that cue rather than discourse order.")


def sop_nsp_decisions(runs, topic, m: dict) -> list:
    """Table 5 through the probes (each made where its arms are in ``runs``), and the
    bag-of-words checks of the two pair sets (no trained model: not gated)."""
    p = paper.TABLE5
    out = []
    if available(runs, "sop", "nsp"):
        out.append(accuracy_decision(runs, "sop_nsp/sop-pairs/sop-nsp", "sop_nsp",
                                     "SOP pairs, probe: SOP-trained minus NSP-trained",
                                     "sop", "nsp", "sop_probe_correct", m["pairs"], +1,
                                     f"{p['sop'][2] - p['nsp'][2]:+.1f} (own heads)"))
    if available(runs, "nsp"):
        out.append(accuracy_decision(runs, "sop_nsp/sop-pairs/nsp-chance", "sop_nsp",
                                     "SOP pairs, probe: NSP-trained minus its random-init "
                                     "control", "nsp", "nsp", "sop_probe_correct",
                                     m["pairs"], 0, f"{p['nsp'][2]:.1f} (chance 50)",
                                     b_correct="control_sop_probe_correct"))
    if available(runs, "sop", "none"):
        out.append(accuracy_decision(runs, "sop_nsp/nsp-pairs/sop-none", "sop_nsp",
                                     "NSP pairs, probe: SOP-trained minus no sentence loss",
                                     "sop", "none", "nsp_probe_correct", m["pairs"], +1,
                                     f"{p['sop'][1] - p['none'][1]:+.1f} "
                                     f"({p['sop'][1]} vs {p['none'][1]})"))
    topic = topic.assign(condition=topic["task"])
    for task, sign in (("nsp", +1), ("sop", 0)):
        part = topic[topic["task"] == task]
        out.append(accuracy_decision(part, f"sop_nsp/topic/{task}", "sop_nsp",
                                     f"bag of words on {task.upper()} pairs minus majority",
                                     task, None, "correct", m["pairs"], sign,
                                     "argued, not measured",
                                     offset=float(part["majority"].iloc[0]),
                                     arms=()))  # a check of the test sets: no model
    return out
