"""Table 2's speedup column: training throughput of the six Table 1 models on one machine,
stored like a run (``throughput-<hash>.json``) so that every build shows the same numbers. A
step is forward, backward and the LAMB update; timings are the fastest of a few steps after
a warm-up, the slowest beside it."""
from __future__ import annotations

import os
import time

from ..engine.store import atomic_write_json, config_hash, read_json
from .. import paper
from ..profiles import ResolvedProfile, resolve

THROUGHPUT_SHAPES = {  # profile: (batch, sequence length, timed steps, width divisor)
    "smoke": (1, 16, 2, 32), "cpu": (4, 64, 3, 1), "gpu": (32, 128, 20, 1)}
# What a timed step holds; in the stored measurement's key, so a new method measures again
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


def throughput(profile: ResolvedProfile, device: str = "auto") -> dict:
    """Training tokens/s (whole steps: ``STEP``) of the six Table 1 models on this
    machine, each from its fastest timed step, with the slowest beside it."""
    import torch

    from ..engine.pretrain import autocast, cpu_threads, make_optimizer, resolve_device, sync
    from ..studies import conditions as C
    from ..engine.provenance import record
    from ..model.modeling import AlbertForPreTraining

    path = throughput_path(profile, device)
    stored = None if os.environ.get("ALBERT_RERUN_FRESH") == "1" else read_json(path)
    if stored is not None:  # None: missing or corrupt, so measured again
        return stored
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


# the throughput table's headers, one unit each
TOKENS = "tokens/s"
SPEEDUP = "speedup vs BERT-large (x)"
PAPER_SPEEDUP = "paper speedup (x)"
SPREAD = "slowest / fastest step (x)"


def throughput_table(measured: dict):
    """Our speedups beside the paper's, with parameters, and their rank correlation."""
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
    """(paper's faster, paper's slower, our ratio) of the pairs our throughput orders the
    other way round, fastest first."""
    ours = speed[SPEEDUP]
    theirs = speed[PAPER_SPEEDUP].sort_values(ascending=False)
    names = list(theirs.index)
    return [(a, b, float(ours[a] / ours[b]))
            for i, a in enumerate(names) for b in names[i + 1:]
            if theirs[a] > theirs[b] and ours[a] < ours[b]]


def setup(measured: dict) -> dict:
    """How a stored throughput was measured: machine, threads, batch, seq, steps, step."""
    machine = measured.get("provenance", {}).get("machine", {})
    return {"machine": machine.get("cpu", "an unrecorded machine"),
            **{k: str(measured[k]) for k in ("threads", "batch", "seq", "steps")},
            "step": measured.get("step", "forward and backward pass")}


def earlier(profile: ResolvedProfile, device: str = "auto"):
    """The newest other stored measurement by the first method (forward and backward)."""
    current = throughput_path(profile, device)
    found = [m for path in sorted(current.parent.glob("throughput-*.json")) if path != current
             and (m := read_json(path)) is not None and "step" not in m]
    return max(found, key=lambda m: m.get("provenance", {}).get("utc_time", ""), default=None)


def rule_verdict(rho: float) -> str:
    """'reproduced' where the rank correlation with the paper's speedups is 1."""
    return "reproduced" if rho > 0.999 else "not reproduced"


def pairs_phrase(speed, shown: int = 2) -> str:
    """The pairs ``discordant_pairs`` finds, as 'albert-base at 0.92x bert-base'; 'none';
    past ``shown`` pairs (a short, noisy timing), their count and the first ``shown``."""
    pairs = [f"{a} at {ratio:.2f}x {b}" for a, b, ratio in discordant_pairs(speed)]
    if len(pairs) > shown:
        return f"{len(pairs)}, among them " + "; ".join(pairs[:shown])
    return "; ".join(pairs) or "none"


def throughput_values(profile: ResolvedProfile | str, device: str = "auto") -> tuple:
    """Chapter 6's throughput: (the current table, {key: short value}) for glue, by the
    whole-step method and (``first_``) by the first."""
    profile = resolve(profile)  # a notebook passes the name
    measured = throughput(profile, device)
    first = earlier(profile, device) or measured
    values = {}
    for prefix, stored in (("", measured), ("first_", first)):
        speed, rho = throughput_table(stored)
        values.update({f"{prefix}rho": f"{rho:.2f}", f"{prefix}verdict": rule_verdict(rho),
                       f"{prefix}pairs": pairs_phrase(speed)})
    values.update(setup(measured), first_machine=setup(first)["machine"],
                  first_steps=setup(first)["steps"])
    # one label: the method fixed first decides; the later method's correlation beside it
    values["ledger"] = (values["verdict"] if values["verdict"] == values["first_verdict"]
                        else f"{values['first_verdict']} ({values['first_rho']}; the "
                             f"whole-step method, chosen later, gives {values['rho']})")
    return throughput_table(measured)[0], values
