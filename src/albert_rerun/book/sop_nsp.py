"""Claim 4 (chapter 4): SOP against NSP (Table 5) through probes, the topic-only baseline
and the cue-free pairs."""
from __future__ import annotations

import pandas as pd

from ..studies import conditions as C
from .. import paper
from ..profiles import ResolvedProfile
from ..studies.decisions import Chapter, accuracy_decision, available, gated, stored_baseline
from .plain import chapter_runs
from .text import metrics_table, scale_short, summary


def sop_nsp(profile: ResolvedProfile | str, seeds=None, device="auto",
            train_missing=False, present: bool = True) -> Chapter:
    """Claim 4: Table 5 through the probes, and the topic-only baseline."""
    from ..studies.baselines import TOPIC_TRAIN_PAIRS, topic_baseline
    profile, seeds, rungs, m, runs = chapter_runs(profile, C.sop_nsp, seeds, device,
                                                  train_missing)
    pairs = TOPIC_TRAIN_PAIRS[profile.name]
    topic = pd.DataFrame([stored_baseline(profile, f"topic-{task}-{seed}", topic_baseline,
                                          task, profile.evaluation, pairs, seed)
                          for task in ("nsp", "sop") for seed in seeds])
    chapter = Chapter("sop_nsp", runs, gated(sop_nsp_decisions(runs, topic, m), runs, rungs),
                      extra={"topic": topic})
    table = metrics_table(runs, {
        f"{pairs.upper()}, {name} %": summary(runs, f"{pairs}_accuracy_{scorer}", 100, 1)
        for pairs in ("sop", "nsp") for scorer, name in (("head", "own head"), ("probe", "probe"))})
    table["paper MLM / NSP / SOP"] = [" / ".join(map(str, paper.TABLE5[k][:3]))
                                      for k in table.index]
    names = {"none": "no sentence loss", "nsp": "NSP", "sop": "SOP"}  # the conditions' keys
    chapter.tables["objectives"] = table.rename(index=names).rename_axis("trained with")
    chapter.texts.update(scale=scale_short(runs, C.base(profile)))
    if present:
        chapter.texts.update({f"beside_{k}": v for k, v in probe_beside_bag(runs, topic).items()})
        from ..studies.pair_cues import cue_free_baselines
        seq = profile.sizes.seq  # computed once per length, and stored
        chapter.tables["cue_free_pairs"] = cue_free_pairs_table(stored_baseline(
            profile, f"cue-free-baselines-{seq}", cue_free_baselines, seq))
    return chapter


def probe_beside_bag(runs, topic) -> dict:
    """{"probe", "bag"}: SOP-trained probe and bag of words on the SOP test pairs, in %."""
    sop = runs.loc[runs["condition"] == "sop", "sop_accuracy_probe"]
    bag = topic.loc[topic["task"] == "sop", "accuracy"]
    if sop.empty or bag.empty:
        return {}
    return {"probe": f"{100 * sop.mean():.1f}", "bag": f"{100 * bag.mean():.1f}"}


def sop_nsp_decisions(runs, topic, m: dict) -> list:
    """Table 5 through the probes, and the bag-of-words checks of the two pair sets."""
    p = paper.TABLE5
    specs = (("sop-pairs/sop-nsp", "SOP pairs, probe: SOP-trained minus NSP-trained", "sop",
              "nsp", "sop_probe_correct", "pairs", +1,
              f"{p['sop'][2] - p['nsp'][2]:+.1f} (own heads)", None),
             ("sop-pairs/nsp-chance", "SOP pairs, probe: NSP-trained minus its random-init "
              "control", "nsp", "nsp", "sop_probe_correct", "chance", 0,
              f"{p['nsp'][2]:.1f} (chance 50)", "control_sop_probe_correct"),
             ("nsp-pairs/sop-none", "NSP pairs, probe: SOP-trained minus no sentence loss",
              "sop", "none", "nsp_probe_correct", "pairs", +1,
              f"{p['sop'][1] - p['none'][1]:+.1f} ({p['sop'][1]} vs {p['none'][1]})", None))
    out = [accuracy_decision(runs, f"sop_nsp/{key}", "sop_nsp", label, a, b, correct,
                             m[margin], sign, figure, b_correct=b_correct)
           for key, label, a, b, correct, margin, sign, figure, b_correct in specs
           if available(runs, a, b)]
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


CUE_FREE_BASELINES = (("majority", "majority label"), ("bag_of_words", "bag of words"),
                      ("cue_bits", "start and end cues (4 bits)"),
                      ("lengths", "segment lengths"))


def cue_free_pairs_table(baselines: dict) -> pd.DataFrame:
    """Per task, the cue-free pairs and each no-network baseline's test accuracy in %."""
    rows = {}
    for task in ("sop", "nsp"):
        b = baselines[task]
        rows[task.upper()] = {"training pairs": b["train_pairs"], "test pairs": b["test_pairs"],
                              **{f"{label} %": round(100 * b[f"{key}_accuracy"], 1)
                                 for key, label in CUE_FREE_BASELINES}}
    return pd.DataFrame.from_dict(rows, orient="index").rename_axis("pairs")
