"""Downstream against its controls: ``downstream`` adds a chapter's table,
``downstream_gate`` tests that pretraining helps at all."""
from __future__ import annotations

import pandas as pd

from ..profiles import ResolvedProfile, resolve
from ..studies import conditions as C
from ..studies.decisions import (Chapter, MissingRuns, gain_decision, gated, interval_text, levels,
                        load_runs, margins, stored_baseline)
from .text import fill, summary


def downstream(chapter: Chapter, profile: ResolvedProfile) -> Chapter:
    """``chapter`` with its downstream tables: probes, fine-tuning, controls (majority label
    and bag of words on each task's test split, stored once), gains."""
    from ..studies.baselines import downstream_controls
    runs = chapter.runs
    controls = {task: stored_baseline(profile, f"downstream-{task}", downstream_controls, task,
                                      profile.evaluation.task_examples)
                for task in ("sentiment", "genre")}
    columns = {"sentiment probe %": "sentiment_probe_accuracy",
               "same, random init %": "control_sentiment_probe_accuracy",
               "genre probe %": "genre_probe_accuracy",
               "genre, random init %": "control_genre_probe_accuracy",
               "sentiment fine-tuned %": "sentiment_accuracy",
               "fine-tuned from random init %": "control_sentiment_accuracy"}
    table = pd.DataFrame({name: summary(runs, metric, 100, 1)
                          for name, metric in columns.items()
                          if metric in runs and runs[metric].notna().any()})
    table = table.reindex(list(dict.fromkeys(runs["condition"]))).fillna("not evaluated")
    rungs = levels(profile)
    m = margins(rungs)
    control = "control_sentiment_probe_correct"
    gains = {name: gated([gain_decision(runs[runs["condition"] == name], f"gain/{name}",
                                        chapter.claim, str(name), "sentiment_probe_correct",
                                        m["downstream"])], runs, rungs)[0]
             for name in dict.fromkeys(runs["condition"])
             if control in runs and runs.loc[runs["condition"] == name, control].notna().any()}
    table["sentiment probe: pretrained minus random init"] = pd.Series(
        {k: interval_text(d.estimate, d.low, d.high, "points") for k, d in gains.items()},
        dtype=object).reindex(table.index).fillna("no control evaluated")
    table.index.name = "condition"
    s, g = controls["sentiment"], controls["genre"]
    chapter.tables["downstream"] = table
    chapter.tables["downstream_controls"] = pd.DataFrame(
        {"majority label %": [100 * s["majority_accuracy"], 100 * g["majority_accuracy"]],
         "bag of words %": [100 * s["bag_of_words_accuracy"], 100 * g["bag_of_words_accuracy"]]},
        index=pd.Index(["sentiment (test)", "genre (test)"], name="control")).round(1)
    chapter.extra["downstream_gains"] = gains
    chapter.texts["downstream"] = downstream_sentence(runs, gains, s)
    return chapter


def _percent_range(values: pd.Series) -> str:
    """'48.5%' for one value (or equal ones), else '48.5 to 50.1%'."""
    low, high = 100 * values.min(), 100 * values.max()
    return f"{low:.1f}%" if f"{low:.1f}" == f"{high:.1f}" else f"{low:.1f} to {high:.1f}%"


def downstream_sentence(runs: pd.DataFrame, gains: dict, sentiment: dict) -> str:
    """The downstream table's paragraph (``sentences.md``)."""
    tuned = runs["sentiment_accuracy"].dropna()
    untrained = runs["control_sentiment_accuracy"].dropna()
    tuned_text = ""
    if len(tuned):
        tuned_text = f", and fine-tuning the base model {_percent_range(tuned)}"
        if len(untrained):
            tuned_text += f" (from random initialization: {_percent_range(untrained)})"
    above = sum(d.low > 0 for d in gains.values())
    unread = [str(k) for k, d in gains.items() if not d.judged]
    return fill("downstream", majority=f"{100 * sentiment['majority_accuracy']:.1f}",
                bag=f"{100 * sentiment['bag_of_words_accuracy']:.1f}",
                probe=_percent_range(runs["sentiment_probe_accuracy"]), tuned=tuned_text,
                gains=len(gains),
                above=(f"; {above} lie above 0, where chance alone puts about "
                       f"{0.025 * len(gains):.1f}" if gains else ""),
                unread=f"; {', '.join(unread)} do not read context" if unread else "")


def downstream_gate(profile: ResolvedProfile | str, seeds=None, device="auto",
                    train_missing=False, present: bool = True) -> Chapter:
    """Pretraining against its random-init control downstream, for the base run."""
    from ..engine.evaluate import evaluate_stored
    from ..engine.pretrain import resolve_device, run
    from ..engine.store import stored_eval, stored_pretrain
    from ..studies.driver import finetune_targets
    profile = resolve(profile)  # a notebook passes the name
    seeds = seeds or C.default_seeds(profile)
    m = margins(levels(profile))
    store, tuning = profile.results, profile.finetune_config()
    untuned = [c for c in finetune_targets(profile, seeds)
               if (run := stored_pretrain(store, c)) is None
               or stored_eval(store, run["hash"], tuning) is None]
    if untuned and not train_missing:
        raise MissingRuns(f"{len(untuned)} fine-tuning evaluations missing at profile "
                          f"{profile.name!r} (the base runs and their controls); run `python "
                          f"-m albert_rerun.studies --profile {profile.name} --stages "
                          f"finetune`")
    for config in untuned:
        pretrained = stored_pretrain(store, config) or run(config, store, quiet=True)
        evaluate_stored(store, pretrained, tuning, resolve_device(device))
    runs = load_runs(profile, {"base": C.base(profile)}, seeds, device, train_missing)
    return Chapter("downstream", runs, gated(gate_decisions(runs, m), runs, levels(profile)))


def gate_decisions(runs, m: dict) -> list:
    """Fine-tuning and the probe: pretrained base minus random init."""
    return [gain_decision(runs, "downstream/finetuned", "downstream",
                          "sentiment fine-tuned: pretrained base minus random init",
                          "sentiment_correct", m["downstream"]),
            gain_decision(runs, "downstream/probe", "downstream",
                          "sentiment probe: pretrained base minus random init",
                          "sentiment_probe_correct", m["downstream"])]


def finetune_repeats(profiles=("cpu", "cpu-long", "gpu")) -> pd.DataFrame:
    """Models fine-tuned under one protocol at several profiles: accuracy and machine."""
    from ..engine.store import read_json
    rows = []
    for profile in map(resolve, profiles):
        folder = profile.results / "eval"
        if not folder.is_dir():
            continue
        for path in folder.glob("*/*.json"):
            stored = read_json(path)
            if not stored or "protocol" not in stored["eval_config"]:
                continue
            machine = stored["provenance"]["machine"]
            rows.append({"model": path.stem, "fine-tuning": path.parent.name,
                         "profile": profile.name,
                         "accuracy %": 100 * stored["metrics"]["sentiment_accuracy"],
                         "machine": machine.get("gpu") or machine.get("cpu", "unknown"),
                         "threads": machine.get("torch_threads")})
    frame = pd.DataFrame(rows, columns=["model", "fine-tuning", "profile", "accuracy %",
                                        "machine", "threads"])
    repeated = frame.groupby(["model", "fine-tuning"])["profile"].transform("nunique") > 1
    return frame[repeated].sort_values(["model", "profile"]).reset_index(drop=True)


def finetune_repeat_text(repeats: pd.DataFrame) -> str:
    """The spread of ``finetune_repeats`` in a paragraph; '' where there is none."""
    if repeats.empty:
        return ""
    wide = repeats.pivot_table(index=["model", "fine-tuning"], columns="profile",
                               values="accuracy %")
    gaps = (wide.max(axis=1) - wide.min(axis=1)).to_numpy()
    machines = " and ".join(dict.fromkeys(repeats["machine"]))
    profiles = " and ".join(f"{p}" for p in dict.fromkeys(repeats["profile"]))
    margin = margins({"distance": 0.0})["downstream"]
    return fill("finetune-repeats", models=len(wide), profiles=profiles, machines=machines,
                low=f"{gaps.min():.1f}", high=f"{gaps.max():.1f}", mean=f"{gaps.mean():.1f}",
                times=f"{gaps.max() / margin:.1f}", margin=f"{margin:g}")
