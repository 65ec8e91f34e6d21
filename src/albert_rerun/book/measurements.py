"""Table 2's speedup column: training throughput of the six Table 1 models on one machine.

A measurement, stored like a run (<the profile's results>/throughput-<hash>.json, with its
provenance) so that the book shows the same numbers on every build; ``fresh`` measures
again. A step is a whole training step: forward, backward and the LAMB update of the
profile's recipe (the update costs in proportion to the parameters, which is where
sharing saves time on one device). Timings are the
fastest of a few steps after a warm-up (the least disturbed by other work), with the
slowest beside it, one model after another in one process.
"""
from __future__ import annotations

import json
import os
import time

from ..engine.store import atomic_write_json, config_hash
from .. import paper
from ..profiles import ResolvedProfile, resolve

THROUGHPUT_SHAPES = {  # profile: (batch, sequence length, timed steps, width divisor)
    "smoke": (1, 16, 2, 32), "cpu": (4, 64, 3, 1), "gpu": (32, 128, 20, 1)}
# What a timed step holds; part of the stored measurement's key, so that a change of
# method measures again instead of reading the old one.
STEP = "forward pass, backward pass and LAMB update"


def table1_config(name: str, divisor: int = 1):
    """A Table 1 model; ``divisor`` > 1 shrinks every width (smoke: the code path only)."""
    from ..model.config import preset
    config = preset(name, hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0)
    if divisor == 1:
        return config
    return config.replace(vocab_size=1000, hidden_size=config.hidden_size // divisor,
                          intermediate_size=config.intermediate_size // divisor,
                          embedding_size=max(8, config.embedding_size // divisor),
                          num_attention_heads=max(1, config.num_attention_heads // divisor))


def _configs(profile: ResolvedProfile) -> dict:
    return {name: table1_config(name, THROUGHPUT_SHAPES[profile.name][3])
            for name in paper.TABLE1}


def throughput_path(profile: ResolvedProfile, device: str = "auto"):
    """Where the throughput table of ``profile`` on ``device`` is stored."""
    batch, seq, steps, _ = THROUGHPUT_SHAPES[profile.name]
    key = config_hash({"models": {k: c.to_dict() for k, c in _configs(profile).items()},
                       "batch": batch, "seq": seq, "steps": steps, "device": device,
                       "step": STEP})
    return profile.results / f"throughput-{key}.json"


def throughput(profile: ResolvedProfile, device: str = "auto", fresh: bool = False) -> dict:
    """Training tokens/s (whole steps: ``STEP``) of the six Table 1 models on this
    machine, each from its fastest timed step, with the slowest beside it."""
    import torch

    from ..engine.pretrain import autocast, cpu_threads, make_optimizer, resolve_device, sync
    from ..studies import conditions as C
    from ..engine.provenance import record
    from ..model.modeling import AlbertForPreTraining

    path = throughput_path(profile, device)
    if path.exists() and not fresh and os.environ.get("ALBERT_RERUN_FRESH") != "1":
        try:
            return json.loads(path.read_text())
        except ValueError:
            print(f"warning: stored measurement {path} is corrupt; measuring again")
    batch, seq, steps, divisor = THROUGHPUT_SHAPES[profile.name]
    configs = _configs(profile)
    torch.set_num_threads(cpu_threads())
    target = resolve_device(device)
    g = torch.Generator().manual_seed(0)
    ids = torch.randint(5, configs["bert-base"].vocab_size, (batch, seq), generator=g).to(target)
    labels = torch.full((batch, seq), -100)
    labels[:, 1:1 + max(1, round(0.15 * seq))] = 7
    labels = labels.to(target)
    rows = {}
    for name, config in configs.items():
        torch.manual_seed(0)
        model = AlbertForPreTraining(config).to(target).train()
        optimizer = make_optimizer(model, C.base(profile))
        timings = []
        for k in range(steps + 1):
            sync(target)
            started = time.perf_counter()
            with autocast(target):
                loss = model(ids, mlm_labels=labels).loss
            loss.backward()
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)
            sync(target)
            if k:  # the first step warms up
                timings.append(time.perf_counter() - started)
        rows[name] = {"step_seconds": min(timings), "slowest_step_seconds": max(timings),
                      "tokens_per_second": batch * seq / min(timings)}
        del model, optimizer
    reference = rows["bert-large"]["tokens_per_second"]
    for row in rows.values():
        row["speedup_vs_bert_large"] = row["tokens_per_second"] / reference
    result = {"batch": batch, "seq": seq, "steps": steps, "step": STEP,
              "width_divisor": divisor, "rows": rows,
              "threads": torch.get_num_threads(), "provenance": record()}
    atomic_write_json(path, result)
    return result


# The throughput table's headers, one unit each (the stored measurement keeps
# its snake_case keys; the page shows these)
TOKENS = "tokens/s"
SPEEDUP = "speedup vs BERT-large (x)"
PAPER_SPEEDUP = "paper speedup (x)"
SPREAD = "slowest / fastest step (x)"


def throughput_table(measured: dict):
    """Our speedups beside the paper's, with parameters; and the rank correlation (of
    the unrounded speedups). Tokens/s whole, ratios to 2 decimals."""
    import pandas as pd

    from ..model.params import closed_form
    rows = pd.DataFrame(measured["rows"]).T.astype(float)
    speed = pd.DataFrame({TOKENS: rows["tokens_per_second"].round().astype(int),
                          SPEEDUP: rows["speedup_vs_bert_large"]})
    if "slowest_step_seconds" in rows:  # how much the timed steps differ
        speed[SPREAD] = rows["slowest_step_seconds"] / rows["step_seconds"]
    speed[PAPER_SPEEDUP] = pd.Series(paper.TABLE2_SPEEDUP)
    speed["params (M)"] = [round(sum(closed_form(table1_config(n)).values()) / 1e6)
                           for n in speed.index]
    rho = float(speed[SPEEDUP].rank().corr(speed[PAPER_SPEEDUP].rank(), method="spearman"))
    return speed.round(2).rename_axis("model"), rho


def discordant_pairs(speed) -> list:
    """The pairs of models that our throughput orders the other way round from the
    paper's speedups, as (paper's faster, paper's slower, our ratio of the two) tuples,
    fastest pairs first: what a rank correlation under 1 is made of. ``speed``:
    ``throughput_table``'s table."""
    ours = speed[SPEEDUP]
    theirs = speed[PAPER_SPEEDUP].sort_values(ascending=False)
    names = list(theirs.index)
    return [(a, b, float(ours[a] / ours[b]))
            for i, a in enumerate(names) for b in names[i + 1:]
            if theirs[a] > theirs[b] and ours[a] < ours[b]]


def throughput_reading(speed, rho: float) -> str:
    """The throughput verdict in words, naming every pair whose order differs, a sentence
    each (the caller ends the last one)."""
    pairs = discordant_pairs(speed)
    if not pairs:
        return (f"reproduced: our ranking of the {len(speed)} models equals the paper's "
                f"(rank correlation {rho:.2f})")
    named = ". ".join(f"The paper has {a} faster than {b}; ours runs {a} at {ratio:.2f} "
                      f"times {b}'s speed" for a, b, ratio in pairs)
    return (f"not reproduced: rank correlation {rho:.2f}, {len(pairs)} of the "
            f"{len(speed) * (len(speed) - 1) // 2} pairs in the other order. {named}")


def setup_text(measured: dict) -> str:
    """How the stored throughput was measured, from the measurement itself: the machine
    and threads, the batch, and what a timed step includes (the measurement may come
    from another machine than the runs)."""
    machine = measured.get("provenance", {}).get("machine", {})
    return (f"measured on {machine.get('cpu', 'an unrecorded machine')} at "
            f"{measured['threads']} thread{'s' if measured['threads'] != 1 else ''}, "
            f"batches of {measured['batch']} x "
            f"{measured['seq']} tokens, "
            + (f"the fastest of {measured['steps']} timed steps" if measured["steps"] > 1
               else "one timed step")
            + " after a warm-up. "
            + (f"A step is the {measured['step']}" if "step" in measured else
               "A step is the forward and backward pass only, without the optimizer's "
               "update. On one device that update costs in proportion to the parameters, "
               "so it would favour the shared models, by most where they are smallest"))


def _earlier(profile: ResolvedProfile, device: str = "auto"):
    """The newest stored measurement of the profile by the first method
    (forward and backward only: no "step"), other than the current one; None if none."""
    current = throughput_path(profile, device)
    earlier = []
    for path in sorted(current.parent.glob("throughput-*.json")):
        if path == current:
            continue
        try:
            measured = json.loads(path.read_text())
        except ValueError:
            continue
        if "step" not in measured:
            earlier.append(measured)
    if not earlier:
        return None
    return max(earlier, key=lambda m: m.get("provenance", {}).get("utc_time", ""))


def rule_verdict(rho: float) -> str:
    """The chapter's rule: the ordering is reproduced where the rank correlation with the
    paper's speedups is 1."""
    return "reproduced" if rho > 0.999 else "not reproduced"


def verdict_label(rho: float, profile: ResolvedProfile, device: str = "auto",
                  short: bool = False) -> str:
    """The throughput verdict by the rule (``rule_verdict``). Where an earlier measurement
    by the pre-specified method (forward and backward only) is stored and read otherwise,
    that reading is the headline and the whole-step method's, chosen after it was seen,
    stands beside it, so that the headline does not rest on the method chosen second.
    ``short``: without the pointer to the chapter's sections, for other pages."""
    verdict = rule_verdict(rho)
    measured = _earlier(profile, device)
    if measured is None:
        return verdict
    old = rule_verdict(throughput_table(measured)[1])
    if old == verdict:
        return verdict
    return (f"{old} by the pre-specified method (forward and backward); {verdict} by the "
            f"whole-step method, chosen after that result"
            + ("" if short else " was seen (both below)"))


def earlier_reading(profile: ResolvedProfile, device: str = "auto") -> str:
    """The reading of the profile's stored measurement by the first method
    (forward and backward only: a stored throughput file without "step"), where one is
    kept beside the current one: the verdict rule was written before either, and the
    method changed after its result was seen, so the page shows both. "" where none."""
    measured = _earlier(profile, device)
    if measured is None:
        return ""
    speed, rho = throughput_table(measured)
    current = throughput_path(profile, device)
    now = json.loads(current.read_text()) if current.exists() else {}
    same_machine = (now.get("provenance", {}).get("machine", {}).get("cpu")
                    == measured.get("provenance", {}).get("machine", {}).get("cpu"))
    return (f"By the first method, the speeds were {setup_text(measured)}. By that method the "
            f"ordering was {throughput_reading(speed, rho)}. The rule above was written "
            f"before either measurement. The method changed after the first result was "
            f"seen, so both stand here."
            + ("" if same_machine else
               " The machine and the number of timed steps changed with it, so the "
               "change of order cannot be put down to the update alone. Timing both kinds "
               "of step in one run on one machine is left to a later build."))


def throughput_glue(profile: ResolvedProfile | str, device: str = "auto") -> tuple:
    """Chapter 6's throughput section: (its table, {glue key: value}) from the stored
    measurement (``throughput``), its rank correlation, verdict and reading."""
    profile = resolve(profile)  # a notebook passes the name
    measured = throughput(profile, device)
    speed, rho = throughput_table(measured)
    verdict = verdict_label(rho, profile, device)
    reading = throughput_reading(speed, rho)
    short = verdict_label(rho, profile, device, short=True)
    earlier = _earlier(profile, device)
    first = throughput_table(earlier)[1] if earlier is not None else rho
    if short != verdict:  # the reading is the second method's: say so where it stands
        reading = f"by the whole-step method, chosen second, {reading}"
    return speed, {"throughput_rho": rho, "throughput_verdict": verdict,
                   "throughput_rho_first": first, "throughput_short": short,
                   "throughput_reading": reading,
                   # the short verdict names both methods already: not "by the
                   # whole-step method" twice in one line
                   "throughput_ledger": (f"{short}. The whole-step reading: "
                                         f"{throughput_reading(speed, rho)}"
                                         if short != verdict else reading
                                         if reading.startswith(short) else
                                         f"{short}. {reading}"),
                   "throughput_setup": setup_text(measured),
                   "throughput_earlier": earlier_reading(profile, device)}
