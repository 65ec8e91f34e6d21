"""The empirical claims' conditions: one definition shared by the notebooks and the driver.

Each claim maps condition names to run configs (without the seed). A configuration
used by several claims (the all-shared ALBERT-style base, the BERT-style model) is
the same config, hence the same stored result: it is trained once.

    .venv/bin/python -m albert_rerun.claims --profile cpu --workers 2

trains every missing run of every claim (two single-threaded workers on a 2-core
machine get more tokens/s together than one two-threaded process at these sizes).
"""
from __future__ import annotations

import argparse
import json
import os
import time
from dataclasses import dataclass

import pandas as pd

from .profiles import PROFILES, pretraining_config
from .results import atomic_write_json, config_hash, result_path, results_dir
from .train import RunConfig, run

SCHEMES = ("none", "attention", "ffn", "all")


@dataclass(frozen=True)
class ClaimSizes:
    """What each profile affords beyond the base run (profiles.pretraining_config)."""

    embedding_sizes: tuple  # the E sweep (claim 6); must include the base E and H
    wide_factor: int  # the wide ALBERT of claim 4: H times this, all shared
    transition_layers: int  # depth of the models of claim 5


CLAIM_SIZES = {
    "smoke": ClaimSizes((8, 16, 32), 2, 2),
    "cpu": ClaimSizes((16, 32, 64), 2, 4),
    "gpu": ClaimSizes((64, 128, 256), 2, 24),
}


def base(profile: str) -> RunConfig:
    """The ALBERT-style base of every claim: E < H, all layers shared, no dropout."""
    return pretraining_config(profile, "albert")


def _model(config: RunConfig, **changes) -> RunConfig:
    return config.replace(model=config.model.replace(**changes))


def bert_style(profile: str) -> RunConfig:
    """Not shared, E = H: the asymmetry table's (none, E = H) cell is this config."""
    b = base(profile)
    return _model(b, sharing="none", embedding_size=b.model.hidden_size)


def asymmetry(profile: str) -> dict:
    b = base(profile)
    sizes = (b.model.embedding_size, b.model.hidden_size)
    return {f"E={e}, {s}": _model(b, embedding_size=e, sharing=s) for e in sizes for s in SCHEMES}


def grouped(profile: str) -> dict:
    """All-shared with G groups of consecutive layers; G = L is the not-shared model."""
    b = base(profile)
    L = b.model.num_hidden_layers
    out = {}
    for G in range(1, L + 1):
        if L % G:
            continue
        if G == 1:
            out[G] = b
        elif G == L:
            out[G] = _model(b, sharing="none")
        else:
            out[G] = _model(b, num_hidden_groups=G)
    return out


def sop_nsp(profile: str) -> dict:
    b = base(profile)
    return {objective: b.replace(objective=objective) for objective in ("none", "nsp", "sop")}


def dropout(profile: str) -> dict:
    b = base(profile)
    return {"no dropout": b,
            "dropout 0.1": _model(b, hidden_dropout_prob=0.1, attention_probs_dropout_prob=0.1)}


def wide_albert(profile: str, steps: int | None = None) -> RunConfig:
    """An all-shared ALBERT-style model ``wide_factor`` times wider than the BERT-style one."""
    b = base(profile)
    H = b.model.hidden_size * CLAIM_SIZES[profile].wide_factor
    config = _model(b, hidden_size=H, intermediate_size=4 * H,
                    num_attention_heads=b.model.num_attention_heads
                    * CLAIM_SIZES[profile].wide_factor)
    if steps is not None:
        config = config.replace(max_steps=steps, warmup_steps=max(2, steps // 20),
                                curve_every=max(1, steps // 12))
    return config


def transitions(profile: str) -> dict:
    """BERT-style and ALBERT-style (E < H, all shared) of equal width, the profile's depth."""
    L = CLAIM_SIZES[profile].transition_layers
    return {"BERT-style": _model(bert_style(profile), num_hidden_layers=L),
            "ALBERT-style": _model(base(profile), num_hidden_layers=L)}


def embedding_sweep(profile: str) -> dict:
    b = base(profile)
    return {f"{s}, E={e}": _model(b, sharing=s, embedding_size=e)
            for s in ("none", "all") for e in CLAIM_SIZES[profile].embedding_sizes}


# -- wall-clock calibration (claim 4) ---------------------------------------------------

def _stored_measurement(path, fresh: bool):
    """A stored calibration or throughput record, unless fresh, missing or corrupt."""
    if fresh or os.environ.get("ALBERT_RERUN_FRESH") == "1" or not path.exists():
        return None
    try:
        return json.loads(path.read_text())
    except ValueError:
        print(f"warning: stored measurement {path} is corrupt; measuring again")
        return None


def _calibration_configs(profile: str) -> dict:
    return {"BERT-style": bert_style(profile), "wide ALBERT-style": wide_albert(profile)}


def calibration_path(profile: str, directory=None):
    """Where the calibration of ``profile``'s current sizes is stored (in ``directory``,
    default the profile's results directory)."""
    configs = _calibration_configs(profile)
    key = config_hash({k: v.to_dict() for k, v in configs.items()})
    return (directory or results_dir(profile)) / f"calibration-{key}.json"


def calibrate(profile: str, device: str = "auto", repeats: int = 5, steps: int = 20,
              fresh: bool = False) -> dict:
    """Seconds per training step of the BERT-style and wide ALBERT-style models, measured
    interleaved in one process; stored so the book's equal-time budgets are reproducible."""
    import statistics

    import torch

    from .bench import _batch, _sync
    from .model import AlbertForPreTraining
    from .provenance import record
    from .train import autocast, cpu_threads, make_optimizer, resolve_device

    configs = _calibration_configs(profile)
    path = calibration_path(profile)
    stored = _stored_measurement(path, fresh)
    if stored is not None:
        return stored
    torch.set_num_threads(cpu_threads())
    target = resolve_device(device)
    b = configs["BERT-style"]
    ids, types, mask, labels, sentence = (t.to(target) for t in _batch(
        b.batch_size, b.max_seq_length))
    labels[:, b.max_predictions:] = -100
    models = {}
    for name, config in configs.items():
        torch.manual_seed(0)
        model = AlbertForPreTraining(config.model).to(target).train()
        models[name] = (model, make_optimizer(model, config))
    seconds = {name: [] for name in configs}
    for _ in range(repeats):
        for name, (model, optimizer) in models.items():
            for k in range(steps + 1):
                if k == 1:
                    _sync(target)
                    started = time.perf_counter()
                with autocast(target):
                    loss = model(ids, types, mask, mlm_labels=labels,
                                 sentence_labels=sentence).loss
                loss.backward()
                optimizer.step()
                optimizer.zero_grad(set_to_none=True)
            _sync(target)
            seconds[name].append((time.perf_counter() - started) / steps)
    step_seconds = {name: statistics.median(values) for name, values in seconds.items()}
    result = {"configs": {k: v.to_dict() for k, v in configs.items()},
              "step_seconds": step_seconds, "all_seconds": seconds,
              "ratio": step_seconds["wide ALBERT-style"] / step_seconds["BERT-style"],
              "provenance": record()}
    atomic_write_json(path, result)
    return result


def wall_clock(profile: str, calibration: dict | None = None) -> dict:
    """Equal steps, and equal time: the wide model's steps fit in the BERT-style budget."""
    calibration = calibration or calibrate(profile)
    steps = base(profile).max_steps
    equal_time_steps = max(1, round(steps / calibration["ratio"]))
    return {"BERT-style": bert_style(profile),
            "wide ALBERT-style, equal steps": wide_albert(profile),
            "wide ALBERT-style, equal time": wide_albert(profile, equal_time_steps)}


# -- running and collecting -------------------------------------------------------------

def with_seed(config: RunConfig, seed: int, device: str) -> RunConfig:
    return config.replace(seed=seed, device=device)


def collect(conditions: dict, seeds, profile: str, device: str = "auto",
            quiet: bool = True) -> pd.DataFrame:
    """One row per (condition, seed): metrics of the stored or freshly trained run."""
    rows = []
    store = results_dir(profile)
    for name, config in conditions.items():
        for seed in seeds:
            result = run(with_seed(config, seed, device), store, quiet=quiet)
            metrics = result["metrics"]  # lists (layer transitions) become object columns
            rows.append({"condition": name, "seed": seed, "hash": result["hash"],
                         "wall_seconds": result["wall_seconds"], **metrics,
                         "curve": result["curve"]})
    return pd.DataFrame(rows)


CLAIMS = ("asymmetry", "sop_nsp", "dropout", "transitions", "embedding_sweep", "grouped",
          "wall_clock")


def claim_groups(profile: str, calibration: dict | None = None, names=CLAIMS) -> list:
    """The named claims' condition dicts, in the order given (the driver's order)."""
    unknown = [n for n in names if n not in CLAIMS]
    if unknown:
        raise ValueError(f"unknown claim(s) {unknown}; choose from {CLAIMS}")
    makers = {"asymmetry": asymmetry, "sop_nsp": sop_nsp, "dropout": dropout,
              "transitions": transitions, "embedding_sweep": embedding_sweep,
              "grouped": grouped, "wall_clock": lambda p: wall_clock(p, calibration)}
    return [makers[name](profile) for name in names]


def planned_runs(profile: str, seeds, device: str = "auto",
                 calibration: dict | None = None, names=CLAIMS) -> list:
    """Every distinct seeded run of the named claims: claim by claim, seed by seed, so
    that an interrupted driver leaves whole claims behind it."""
    seen, out = set(), []
    for group in claim_groups(profile, calibration, names):
        for seed in seeds:
            for config in group.values():
                seeded = with_seed(config, seed, device)
                key = config_hash(seeded.to_dict())
                if key not in seen:
                    seen.add(key)
                    out.append(seeded)
    return out


def train_runs(configs: list, profile: str, workers: int = 1, fresh: bool = False,
               seconds: float = float("inf")) -> int:
    """Train these runs into the profile's store (``workers`` side by side, the cores
    shared among them), reporting each; returns how many finished (failed runs and runs
    not started by the deadline are reported and left out)."""
    from .train import run_many
    threads = max(1, len(os.sched_getaffinity(0)) // workers) if workers > 1 else None
    store = results_dir(profile)
    jobs = [(config, config, store, {"fresh": fresh}) for config in configs]
    done = 0
    for config, outcome in run_many(jobs, workers, seconds, threads):
        key = config_hash(config.to_dict())
        if outcome is None:
            print(f"{key}: not started (deadline)", flush=True)
        elif isinstance(outcome, str):
            print(f"{key}: FAILED {outcome}", flush=True)
        else:
            result, wall = outcome
            m = result["metrics"]
            print(f"{result['hash']} {config.model.sharing:>9} "
                  f"E={config.model.embedding_size} H={config.model.hidden_size} "
                  f"{config.objective} seed {config.seed} steps {m['steps']}: MLM "
                  f"{m['mlm_accuracy']:.3f} ({wall:.0f} s)", flush=True)
            done += 1
    return done


def default_workers() -> int:
    """Two single-threaded workers on a CPU with two or more cores; one on a GPU."""
    import torch
    if torch.cuda.is_available():
        return 1
    return 2 if len(os.sched_getaffinity(0)) >= 2 else 1


def train_all(profile: str, seeds=None, device: str = "auto", workers: int | None = None,
              fresh: bool = False, names=CLAIMS, seconds: float = float("inf"),
              exclude=()) -> int:
    """Measure the step-time calibration and the throughput table, then train every run
    the named claims need that is not stored (all of them when ``fresh``) and that the
    ``exclude`` claims do not also need (another machine trains those); no run starts
    after ``seconds``. Returns the number of runs trained; a failed run is reported and
    the others go on (the count leaves it out)."""
    seeds = range(seeds or PROFILES[profile].default_seeds)
    workers = workers or default_workers()
    saved = os.environ.get("ALBERT_RERUN_THREADS")
    if workers > 1:  # calibrate at the thread count the runs will have
        os.environ["ALBERT_RERUN_THREADS"] = str(
            max(1, len(os.sched_getaffinity(0)) // workers))
    try:
        calibration = calibrate(profile, device, fresh=fresh)
    finally:
        if saved is None:
            os.environ.pop("ALBERT_RERUN_THREADS", None)
        else:
            os.environ["ALBERT_RERUN_THREADS"] = saved
    print(f"step-time ratio wide/BERT-style: {calibration['ratio']:.2f}", flush=True)
    throughput(profile, device, fresh=fresh)
    configs = planned_runs(profile, seeds, device, calibration, names)
    if exclude:
        elsewhere = {config_hash(c.to_dict())
                     for c in planned_runs(profile, seeds, device, calibration, exclude)}
        configs = [c for c in configs if config_hash(c.to_dict()) not in elsewhere]
    store = results_dir(profile)
    missing = configs if fresh else [
        c for c in configs if not result_path(store, c).exists()]
    print(f"{len(configs)} runs, {len(missing)} to train", flush=True)
    return train_runs(missing, profile, workers, fresh, seconds)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--profile", default="cpu", choices=tuple(PROFILES))
    parser.add_argument("--seeds", type=int, default=None, help="default: the profile's")
    parser.add_argument("--device", default="auto", choices=("auto", "cpu", "cuda"))
    parser.add_argument("--workers", type=int, default=None,
                        help="parallel training processes (default: 2 on a CPU, 1 on a GPU)")
    parser.add_argument("--fresh", action="store_true", help="retrain even if stored")
    parser.add_argument("--claims", nargs="+", default=list(CLAIMS), choices=CLAIMS,
                        metavar="CLAIM", help=f"which claims' runs, in this order "
                        f"(default: all, {' '.join(CLAIMS)})")
    parser.add_argument("--seconds", type=float, default=float("inf"),
                        help="start no run after this many seconds (default: no limit)")
    parser.add_argument("--exclude", nargs="+", default=[], choices=CLAIMS, metavar="CLAIM",
                        help="leave out the runs these claims need (another machine's share)")
    args = parser.parse_args(argv)
    train_all(args.profile, args.seeds, args.device, args.workers, args.fresh,
              args.claims, args.seconds, args.exclude)
    return 0




# -- what a chapter prints ---------------------------------------------------------------

def parameter_count_of(model_config) -> int:
    from .params import closed_form
    return int(sum(closed_form(model_config).values()))


def parameter_count(config: RunConfig) -> int:
    return parameter_count_of(config.model)


def _full_budget(frame: pd.DataFrame) -> pd.DataFrame:
    """The runs that trained the full step budget (an equal-time run stops earlier, and its
    length depends on a timing, so it must not move the scale sentence)."""
    return frame[frame["steps"] == frame["steps"].max()]


def _tokens_text(tokens: float) -> str:
    """1.9M tokens, or the exact count below a million (smoke runs see thousands)."""
    return f"{tokens / 1e6:.1f}M" if tokens >= 1e6 else f"{tokens:,.0f}"


def _seeds_text(frame: pd.DataFrame) -> str:
    n = frame["seed"].nunique()
    return f"{n} seed" if n == 1 else f"{n} seeds"


def scale_gap(frame: pd.DataFrame, config: RunConfig) -> str:
    """One sentence: parameters, tokens and steps of our runs against the paper's."""
    from . import paper
    frame = _full_budget(frame)
    tokens = float(frame["tokens"].mean())
    paper_tokens = paper.PAPER_STEPS * paper.PAPER_BATCH * paper.PAPER_SEQ
    return (f"Scale gap: ours {parameter_count(config) / 1e6:.2f}M parameters (base), "
            f"{int(frame['steps'].max()):,} steps, {_tokens_text(tokens)} tokens per run; the "
            f"paper's ablations 12M (ALBERT-base) to 108M parameters, "
            f"{paper.PAPER_STEPS:,} steps of {paper.PAPER_BATCH} x {paper.PAPER_SEQ} tokens "
            f"({paper_tokens / 1e9:.0f}B tokens, {paper_tokens / tokens:,.0f}x ours).")


def scale_short(frame: pd.DataFrame, config: RunConfig) -> str:
    """The ledger's scale cell: parameters, steps and tokens of one run."""
    frame = _full_budget(frame)
    return (f"{parameter_count(config) / 1e6:.2f}M params, {int(frame['steps'].max()):,} "
            f"steps, {_tokens_text(float(frame['tokens'].mean()))} tokens, "
            f"{_seeds_text(frame)}")


def context_reading(frame: pd.DataFrame, conditions: dict) -> str:
    """One sentence: how many of a chapter's runs end reading context, i.e. below the
    reads-context line at [MASK] of their own held-out set (baselines.reference_levels;
    the first chapter explains the line)."""
    from .baselines import reference_levels
    below = sum(bool(loss < reference_levels(conditions[condition])["reads_context"])
                for condition, loss in zip(frame["condition"], frame["mlm_loss_at_mask"]))
    share = ("all" if below == len(frame) else "none" if below == 0 else
             f"{below} of {len(frame)}")
    return (f"Of these {len(frame)} runs, {share} end below the unigram's cross-entropy at "
            f"[MASK] by two standard errors, the line that says a model reads context "
            f"(first chapter): these are models in their first minutes of training, and "
            f"differences between conditions are differences in how fast they learn, "
            f"not in what they finally learn.")


def downstream_majority(frame: pd.DataFrame) -> float:
    """The downstream average (%) of always guessing each task's most frequent label."""
    return float(100 * (frame["sentiment_majority"] + frame["genre_majority"]).mean() / 2)


def interval_text(interval, digits: int = 1) -> str:
    return f"{interval.mean:+.{digits}f} [{interval.low:+.{digits}f}, {interval.high:+.{digits}f}]"


def combine_verdicts(verdicts) -> str:
    """A claim tested in several settings: reproduced only if reproduced in all, not
    reproduced if contradicted in any, otherwise inconclusive."""
    verdicts = list(verdicts)
    if verdicts and all(v == "reproduced" for v in verdicts):
        return "reproduced"
    if any(v == "not reproduced" for v in verdicts):
        return "not reproduced"
    return "inconclusive"


def interval_plot(ax, table: pd.DataFrame, labels=None, color=None, offset: float = 0.0,
                  label=None):
    """Means with 95% intervals (rows of a stats.summarize table) as points and bars;
    an infinite interval (one seed) is drawn as a point only."""
    import numpy as np
    x = np.arange(len(table)) + offset
    finite = np.isfinite(table["low"]) & np.isfinite(table["high"])
    errors = np.where(finite, [table["mean"] - table["low"], table["high"] - table["mean"]], 0)
    ax.errorbar(x, table["mean"], yerr=errors, fmt="o", capsize=3, color=color, label=label)
    ax.set_xticks(np.arange(len(table)), labels or [str(i) for i in table.index])
    return ax


def rounded_summary(table: pd.DataFrame, digits: int = 1) -> pd.DataFrame:
    """A summarize table as text 'mean [low, high]' for display."""
    import numpy as np

    def cell(row):
        if not np.isfinite(row["low"]):
            return f"{row['mean']:.{digits}f} (1 seed)"
        return f"{row['mean']:.{digits}f} [{row['low']:.{digits}f}, {row['high']:.{digits}f}]"
    return table.apply(cell, axis=1)


def passes_over_data(frame: pd.DataFrame, config: RunConfig) -> float:
    """Tokens a run saw divided by the tokens of its training documents: below 1, no
    training sequence was seen twice."""
    from .pretraining_data import tokenize_split
    from .tokenizer import Tokenizer
    corpus = tokenize_split("train", Tokenizer()).subset(config.train_documents)
    return float(frame["tokens"].max()) / len(corpus.tokens)


# -- Table 2's speedup column (claim 6a) ---------------------------------------------------

THROUGHPUT_SHAPES = {  # profile: (batch, sequence length, timed steps, width divisor)
    "smoke": (1, 16, 1, 32), "cpu": (4, 64, 2, 1), "gpu": (32, 128, 5, 1)}


def table1_config(name: str, divisor: int = 1):
    """A Table 1 model; ``divisor`` > 1 shrinks every width (smoke: the code path only)."""
    from .config import preset
    config = preset(name, hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0)
    if divisor == 1:
        return config
    return config.replace(vocab_size=1000, hidden_size=config.hidden_size // divisor,
                          intermediate_size=config.intermediate_size // divisor,
                          embedding_size=max(8, config.embedding_size // divisor),
                          num_attention_heads=max(1, config.num_attention_heads // divisor))


def _throughput_configs(profile: str) -> dict:
    from . import paper
    return {name: table1_config(name, THROUGHPUT_SHAPES[profile][3]) for name in paper.TABLE1}


def throughput_path(profile: str, device: str = "auto"):
    """Where the throughput table of ``profile`` on ``device`` is stored."""
    batch, seq, steps, _ = THROUGHPUT_SHAPES[profile]
    key = config_hash({"models": {k: c.to_dict() for k, c in
                                  _throughput_configs(profile).items()},
                       "batch": batch, "seq": seq, "steps": steps, "device": device})
    return results_dir(profile) / f"throughput-{key}.json"


def throughput(profile: str, device: str = "auto", fresh: bool = False) -> dict:
    """Training tokens/s (forward + backward) of the six Table 1 models on this machine,
    at a short sequence length, one after another in one process; stored like a run."""
    import torch

    from .bench import _sync
    from .model import AlbertForPreTraining
    from .provenance import record
    from .train import autocast, cpu_threads, resolve_device

    batch, seq, steps, divisor = THROUGHPUT_SHAPES[profile]
    configs = _throughput_configs(profile)
    path = throughput_path(profile, device)
    stored = _stored_measurement(path, fresh)
    if stored is not None:
        return stored
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
        timings = []
        for k in range(steps + 1):
            _sync(target)
            started = time.perf_counter()
            with autocast(target):
                loss = model(ids, mlm_labels=labels).loss
            loss.backward()
            model.zero_grad(set_to_none=True)
            _sync(target)
            if k:  # the first step warms up
                timings.append(time.perf_counter() - started)
        rows[name] = {"step_seconds": min(timings), "tokens_per_second": batch * seq / min(timings)}
        del model
    reference = rows["bert-large"]["tokens_per_second"]
    for row in rows.values():
        row["speedup_vs_bert_large"] = row["tokens_per_second"] / reference
    result = {"batch": batch, "seq": seq, "steps": steps, "width_divisor": divisor, "rows": rows,
              "threads": torch.get_num_threads(), "provenance": record()}
    atomic_write_json(path, result)
    return result


def untrained_transitions(config: RunConfig, seed: int) -> dict:
    """Claim 5's control: the transitions of the same model at initialization (the seed
    initializes it exactly as the trained run's step 0), on the same held-out sequences."""
    import torch

    from .model import AlbertForPreTraining
    from .pretraining_data import tokenize_split
    from .tokenizer import Tokenizer
    from .train import HeldOut, layer_transitions, resolve_device

    tokenizer = Tokenizer(vocab_size=config.vocab_size)
    held_out = HeldOut(config, tokenizer, tokenize_split("validation", tokenizer))
    torch.manual_seed(seed)
    device = resolve_device(config.device)
    model = AlbertForPreTraining(config.model).to(device)
    return layer_transitions(model, held_out, device)


def roughness(values) -> float:
    """How jumpy a layer-to-layer curve is: mean |change between consecutive layers|
    divided by the curve's mean (scale-free, so L2 and angles compare across models)."""
    import numpy as np
    x = np.asarray(values, dtype=float)
    if len(x) < 2:
        return 0.0
    return float(np.abs(np.diff(x)).mean() / max(abs(x.mean()), 1e-12))


if __name__ == "__main__":
    raise SystemExit(main())
