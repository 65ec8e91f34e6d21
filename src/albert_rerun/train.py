"""The pretraining engine: one function from a typed run config to stored metrics.

Every run is deterministic given its config: the instances of epoch e are built with
seed (seed, e), the masks of step s with (seed, s), dropout with (seed, s). A run
killed at any point resumes from its last checkpoint and ends with the same metrics.
"""
from __future__ import annotations

import dataclasses
import logging
import os
import queue
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F

from .config import ModelConfig
from .finetune import FinetuneProtocol, cls_features, finetune, linear_probe
from .model import AlbertForPreTraining
from .pretraining_data import (MaskingConfig, OBJECTIVES, create_instances, mask_batch,
                               tokenize_split, tokenizer_arrays)
from .provenance import record
from .results import atomic_write_json, load_result, result_path
from .tokenizer import Tokenizer

log = logging.getLogger(__name__)
OPTIMIZERS = ("adamw", "lamb")


@dataclass(frozen=True)
class RunConfig:
    """Everything that determines a pretraining run's result."""

    model: ModelConfig
    objective: str = "sop"  # sop | nsp | none
    max_seq_length: int = 128
    batch_size: int = 64
    max_predictions: int = 20  # masked tokens per sequence, at most
    optimizer: str = "lamb"  # lamb (the paper; learned fastest in the recipe search) | adamw
    learning_rate: float = 5e-3
    weight_decay: float = 0.01
    warmup_steps: int = 100
    max_steps: int = 1000  # budget in steps (the LR schedule's length)
    max_seconds: float = 0.0  # wall-clock budget of training time; 0 for none
    seed: int = 0
    eval_examples: int = 512  # held-out sequences per evaluation
    curve_every: int = 100  # steps between learning-curve points (0: none)
    device: str = "auto"
    sop_random_for_single: bool = False  # official SOP's NSP-style negatives
    probe_examples: int = 1024  # training pairs for the frozen-encoder SOP/NSP probes
    train_documents: int = 0  # pretrain on this many training documents; 0: all
    finetune: FinetuneProtocol | None = field(default_factory=FinetuneProtocol)  # None: skip

    def __post_init__(self):
        if self.objective not in OBJECTIVES:
            raise ValueError(f"RunConfig.objective must be one of {OBJECTIVES}, "
                             f"got {self.objective!r}")
        if self.optimizer not in OPTIMIZERS:
            raise ValueError(f"RunConfig.optimizer must be one of {OPTIMIZERS}, "
                             f"got {self.optimizer!r}")
        for name in ("max_seq_length", "batch_size", "max_predictions", "max_steps",
                     "eval_examples"):
            if getattr(self, name) < 1:
                raise ValueError(f"RunConfig.{name} must be >= 1, got {getattr(self, name)}")
        if self.max_seq_length > self.model.max_position_embeddings:
            raise ValueError("RunConfig.max_seq_length exceeds the model's "
                             "max_position_embeddings")

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, values: dict) -> "RunConfig":
        finetune_values = values.get("finetune")
        return cls(**{**values, "model": ModelConfig.from_dict(values["model"]),
                      "finetune": FinetuneProtocol(**finetune_values) if finetune_values
                      else None})

    def replace(self, **changes) -> "RunConfig":
        return dataclasses.replace(self, **changes)

    @property
    def vocab_size(self) -> int:
        return self.model.vocab_size


def cpu_threads() -> int:
    """Threads for torch: the cores this process may use, or $ALBERT_RERUN_THREADS (set by
    the claims driver when it runs several single-threaded workers side by side)."""
    return int(os.environ.get("ALBERT_RERUN_THREADS") or 0) or max(1, len(os.sched_getaffinity(0)))


def resolve_device(device: str) -> torch.device:
    if device == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    return torch.device(device)


def autocast(device: torch.device):
    """bf16 autocast on a GPU (training, calibration and timings alike); fp32 on a CPU."""
    return torch.autocast(device.type, dtype=torch.bfloat16, enabled=device.type == "cuda")


def learning_rate(config: RunConfig, step: int, elapsed: float) -> float:
    """Linear warm-up, then linear decay to 0 at the budget (steps or seconds)."""
    if step < config.warmup_steps:
        return config.learning_rate * (step + 1) / config.warmup_steps
    progress = (step - config.warmup_steps) / max(1, config.max_steps - config.warmup_steps)
    if config.max_seconds:
        progress = max(progress, elapsed / config.max_seconds)
    return config.learning_rate * max(0.0, 1.0 - progress)


def make_optimizer(model: torch.nn.Module, config: RunConfig):
    """LayerNorm weights and biases get no weight decay (as the official LAMB)."""
    decay, no_decay = [], []
    for parameter in model.parameters():
        (no_decay if parameter.dim() < 2 else decay).append(parameter)
    groups = [{"params": decay, "weight_decay": config.weight_decay},
              {"params": no_decay, "weight_decay": 0.0}]
    if config.optimizer == "lamb":
        import warnings
        with warnings.catch_warnings():  # it imports tqdm.auto, which warns in kernels
            warnings.simplefilter("ignore")
            from pytorch_optimizer import Lamb
        return Lamb(groups, lr=config.learning_rate, betas=(0.9, 0.999), eps=1e-6,
                    max_grad_norm=0.0)
    return torch.optim.AdamW(groups, lr=config.learning_rate, betas=(0.9, 0.999), eps=1e-6)


def instance_tensors(instances, rows, input_ids=None, length: int | None = None) -> dict:
    """Model inputs for instance ``rows``: ids (masked ones if given), types, padding mask.

    ``length`` trims the padding every row shares; default: the full sequence length.
    """
    length = length or instances.input_ids.shape[1]
    ids = instances.input_ids[rows] if input_ids is None else input_ids
    return {"input_ids": torch.from_numpy(ids[:, :length].astype(np.int64)),
            "token_type_ids": torch.from_numpy(
                instances.token_type_ids[rows, :length].astype(np.int64)),
            "attention_mask": torch.from_numpy(
                (np.arange(length)[None, :] < instances.lengths[rows, None]).astype(np.int64))}


# -- data stream ---------------------------------------------------------------------

class BatchStream:
    """Masked training batches for steps start, start+1, ...; built in a thread.

    Building a batch (masking in numpy) overlaps with the model's step, which runs in
    C++ without the GIL: the data pipeline stays off the critical path.
    """

    def __init__(self, config: RunConfig, tokenizer: Tokenizer, corpus, start_step: int):
        self.config, self.tokenizer, self.corpus = config, tokenizer, corpus
        self.arrays = tokenizer_arrays(tokenizer)
        self.masking = MaskingConfig(max_predictions=config.max_predictions)
        self.queue: queue.Queue = queue.Queue(maxsize=4)
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._fill, args=(start_step,), daemon=True)
        self.thread.start()

    def _epoch(self, epoch: int):
        instances = create_instances(self.corpus, self.tokenizer, self.config.objective,
                                     self.config.max_seq_length, seed=self.config.seed * 1000 + epoch,
                                     sop_random_for_single=self.config.sop_random_for_single)
        order = np.random.default_rng([self.config.seed, epoch, 7]).permutation(len(instances))
        return instances, order, len(instances) // self.config.batch_size

    def _fill(self, start_step: int):
        try:
            epoch, first_step = 0, 0
            instances, order, steps = self._epoch(0)
            while first_step + steps <= start_step:  # skip whole epochs when resuming
                first_step += steps
                epoch += 1
                instances, order, steps = self._epoch(epoch)
            step = start_step
            while not self.stop.is_set():
                if step - first_step >= steps:
                    first_step += steps
                    epoch += 1
                    instances, order, steps = self._epoch(epoch)
                k = step - first_step
                rows = order[k * self.config.batch_size:(k + 1) * self.config.batch_size]
                self._put((step, self._batch(instances, rows, [self.config.seed, step])))
                step += 1
        except BaseException as error:  # surface errors in the consumer
            self._put((None, error))

    def _put(self, item) -> None:
        while not self.stop.is_set():
            try:
                self.queue.put(item, timeout=0.1)
                return
            except queue.Full:
                continue

    def _batch(self, instances, rows, seed):
        rng = np.random.default_rng(seed)
        ids, labels = mask_batch(instances, rows, self.arrays, self.masking, rng)
        T = int(instances.lengths[rows].max())  # trim the padding every row shares
        return {**instance_tensors(instances, rows, ids, T),
                "mlm_labels": torch.from_numpy(labels[:, :T]),
                "sentence_labels": torch.from_numpy(instances.sentence_labels[rows].copy())}

    def next(self, expected_step: int) -> dict:
        step, batch = self.queue.get()
        if step is None:
            raise batch
        assert step == expected_step, (step, expected_step)
        return batch

    def close(self):
        self.stop.set()
        try:
            while True:
                self.queue.get_nowait()
        except queue.Empty:
            pass


# -- evaluation ---------------------------------------------------------------------

class HeldOut:
    """Fixed validation batches: MLM on the model's objective, SOP and NSP pairs."""

    def __init__(self, config: RunConfig, tokenizer: Tokenizer, corpus):
        self.sets = {}
        self.mask_id = tokenizer.mask_id
        masking = MaskingConfig(max_predictions=config.max_predictions)
        arrays = tokenizer_arrays(tokenizer)
        for objective in ("sop", "nsp", config.objective):
            if objective in self.sets:
                continue
            instances = create_instances(corpus, tokenizer, objective, config.max_seq_length,
                                         seed=12345, limit=config.eval_examples)
            rows = np.arange(min(config.eval_examples, len(instances)))
            ids, labels = mask_batch(instances, rows, arrays, masking,
                                     np.random.default_rng(54321))
            self.sets[objective] = {
                **instance_tensors(instances, rows, ids),
                "original_ids": torch.from_numpy(instances.input_ids[rows].astype(np.int64)),
                "mlm_labels": torch.from_numpy(labels),
                "sentence_labels": torch.from_numpy(instances.sentence_labels[rows].copy())}


@torch.no_grad()
def evaluate(model, held_out: HeldOut, objective: str, device, batch_size: int = 64,
             limit: int | None = None) -> dict:
    """Held-out MLM accuracy/loss (model's objective) and its head's SOP/NSP accuracy."""
    model.eval()
    metrics = {}
    for name, data in held_out.sets.items():
        n = len(data["input_ids"]) if limit is None else min(limit, len(data["input_ids"]))
        correct = total = sentence_correct = masked_correct = masked_total = 0
        loss_sum = masked_loss_sum = 0.0
        for start in range(0, n, batch_size):
            batch = {k: v[start:min(n, start + batch_size)].to(device) for k, v in data.items()
                     if k != "original_ids"}
            out = model(batch["input_ids"], batch["token_type_ids"], batch["attention_mask"],
                        mlm_labels=batch["mlm_labels"])
            selected = batch["mlm_labels"] != -100
            targets = batch["mlm_labels"][selected]
            hits = out.mlm_logits.argmax(-1) == targets
            correct += hits.sum().item()
            total += targets.numel()
            # where the input shows [MASK], only context can tell the word
            at_mask = batch["input_ids"][selected] == held_out.mask_id
            masked_correct += hits[at_mask].sum().item()
            masked_total += at_mask.sum().item()
            loss_sum += out.mlm_loss.item() * targets.numel()
            # per-target losses, then the sum where [MASK] is shown: the order of summation
            # the stored runs were computed with, so that they rerun bit-identically
            losses = F.cross_entropy(out.mlm_logits.float(), targets, reduction="none")
            masked_loss_sum += losses[at_mask].sum().item()
            sentence_correct += (out.sentence_logits.argmax(-1)
                                 == batch["sentence_labels"]).sum().item()
        if name == objective:
            metrics["mlm_accuracy"] = correct / total
            metrics["mlm_accuracy_at_mask"] = masked_correct / max(1, masked_total)
            metrics["mlm_loss"] = loss_sum / total
            metrics["mlm_loss_at_mask"] = masked_loss_sum / max(1, masked_total)  # nats
        if name in ("sop", "nsp"):
            metrics[f"{name}_accuracy_head"] = sentence_correct / n
            share = data["sentence_labels"][:n].float().mean().item()
            metrics[f"{name}_majority"] = max(share, 1 - share)  # a constant guess
    model.train()
    return metrics


def probe_sentence_tasks(model, config: RunConfig, tokenizer, train_corpus,
                         held_out: HeldOut, device) -> dict:
    """SOP and NSP accuracy of a logistic-regression probe on frozen [CLS] features.

    Every model gets the same probe, whatever its own head was trained for (Table 5).
    """
    metrics = {}
    for task in ("sop", "nsp"):
        instances = create_instances(train_corpus, tokenizer, task, config.max_seq_length,
                                     seed=999, limit=config.probe_examples)
        rows = np.arange(min(config.probe_examples, len(instances)))
        train_inputs = instance_tensors(instances, rows)
        test = held_out.sets[task]
        test_inputs = {"input_ids": test["original_ids"], "token_type_ids": test["token_type_ids"],
                       "attention_mask": test["attention_mask"]}
        metrics[f"{task}_accuracy_probe"] = linear_probe(
            cls_features(model, train_inputs, device), instances.sentence_labels[rows],
            cls_features(model, test_inputs, device), test["sentence_labels"].numpy())
    model.train()
    return metrics


@torch.no_grad()
def layer_transitions(model, held_out: HeldOut, device, limit: int = 64) -> dict:
    """Figure 1's measure: L2 distance and angle (degrees) between each layer's input
    and output, per token, averaged over the non-padding tokens of held-out sequences."""
    model.eval()
    data = next(iter(held_out.sets.values()))
    batch = {k: data[k][:limit].to(device) for k in ("token_type_ids", "attention_mask")}
    states = model.albert(data["original_ids"][:limit].to(device), batch["token_type_ids"],
                          batch["attention_mask"], output_hidden_states=True)[2]
    keep = batch["attention_mask"].bool()
    distances, angles = [], []
    for before, after in zip(states[:-1], states[1:]):
        a, b = before.double()[keep], after.double()[keep]  # arccos near 1 needs float64
        distances.append((b - a).norm(dim=-1).mean().item())
        cosine = torch.nn.functional.cosine_similarity(a, b, dim=-1).clamp(-1, 1)
        angles.append(torch.rad2deg(torch.arccos(cosine)).mean().item())
    model.train()
    return {"transition_l2": distances, "transition_angle": angles}


@torch.no_grad()
def training_split_mlm(model, config: RunConfig, tokenizer, train_corpus, device) -> dict:
    """MLM loss/accuracy on fixed training sequences, in eval mode (no dropout): with the
    held-out figures it gives the train/validation gap that the dropout claim needs."""
    model.eval()
    instances = create_instances(train_corpus, tokenizer, config.objective,
                                 config.max_seq_length, seed=777, limit=config.eval_examples)
    rows = np.arange(min(config.eval_examples, len(instances)))
    ids, labels = mask_batch(instances, rows, tokenizer_arrays(tokenizer),
                             MaskingConfig(max_predictions=config.max_predictions),
                             np.random.default_rng(4321))
    inputs = instance_tensors(instances, rows, ids)
    labels = torch.from_numpy(labels)
    loss_sum, correct, total = 0.0, 0, 0
    for start in range(0, len(rows), 64):
        part = {k: v[start:start + 64].to(device) for k, v in inputs.items()}
        target = labels[start:start + 64].to(device)
        out = model(part["input_ids"], part["token_type_ids"], part["attention_mask"],
                    mlm_labels=target)
        n = int((target != -100).sum())
        loss_sum += out.mlm_loss.item() * n
        correct += (out.mlm_logits.argmax(-1) == target[target != -100]).sum().item()
        total += n
    model.train()
    return {"train_mlm_loss": loss_sum / total, "train_mlm_accuracy": correct / total}


# -- the run -------------------------------------------------------------------------

def _save_checkpoint(path: Path, model, optimizer, state: dict) -> None:
    payload = {"model": model.state_dict(), "optimizer": optimizer.state_dict(), **state}
    partial = path.with_suffix(".partial")
    torch.save(payload, partial)
    os.replace(partial, path)  # atomic


def _load_checkpoint(path: Path, model, optimizer):
    """The saved state, or None (with a warning) when absent or corrupt."""
    if not path.exists():
        return None
    try:
        payload = torch.load(path, weights_only=True, map_location="cpu")
        model.load_state_dict(payload["model"])
        optimizer.load_state_dict(payload["optimizer"])
        return {k: v for k, v in payload.items() if k not in ("model", "optimizer")}
    except Exception as error:
        print(f"warning: checkpoint {path} is corrupt ({error}); starting the run over")
        path.unlink(missing_ok=True)
        return None


CURVE_EXAMPLES = 128  # held-out sequences per learning-curve point (the final eval: all)


def pretrain(config: RunConfig, workdir: Path, checkpoint_every: int = 100,
             quiet: bool = False, curve_examples: int | None = CURVE_EXAMPLES) -> dict:
    """Train (or resume) one run in ``workdir``; return metrics and the model state.

    Curve points are scored on the first ``curve_examples`` held-out sequences (None:
    all of them, as the final evaluation); each point records how many it used."""
    import warnings
    with warnings.catch_warnings():  # tqdm.auto warns in kernels without ipywidgets
        warnings.simplefilter("ignore")
        from tqdm.auto import tqdm

    device = resolve_device(config.device)
    torch.set_num_threads(cpu_threads())
    tokenizer = Tokenizer(path=None, vocab_size=config.vocab_size)
    if tokenizer.vocab_size != config.model.vocab_size:
        raise ValueError(f"model vocab_size {config.model.vocab_size} != tokenizer's "
                         f"{tokenizer.vocab_size}")
    torch.manual_seed(config.seed)
    model = AlbertForPreTraining(config.model).to(device)
    optimizer = make_optimizer(model, config)
    workdir.mkdir(parents=True, exist_ok=True)
    checkpoint = workdir / "checkpoint.pt"
    state = _load_checkpoint(checkpoint, model, optimizer) or {
        "step": 0, "seconds": 0.0, "tokens": 0, "curve": []}
    held_out = HeldOut(config, tokenizer, tokenize_split("validation", tokenizer))
    train_corpus = tokenize_split("train", tokenizer).subset(config.train_documents)
    stream = BatchStream(config, tokenizer, train_corpus, state["step"])
    bar = tqdm(total=config.max_steps, initial=state["step"], disable=quiet,
               desc=f"{config.objective} H{config.model.hidden_size}", leave=False)
    try:
        while state["step"] < config.max_steps and not (
                config.max_seconds and state["seconds"] >= config.max_seconds):
            step = state["step"]
            batch = {k: v.to(device, non_blocking=True) for k, v in stream.next(step).items()}
            started = time.perf_counter()
            for group in optimizer.param_groups:
                group["lr"] = learning_rate(config, step, state["seconds"])
            torch.manual_seed(config.seed * 1_000_003 + step)  # dropout, step-determined
            with autocast(device):
                out = model(batch["input_ids"], batch["token_type_ids"],
                            batch["attention_mask"], mlm_labels=batch["mlm_labels"],
                            sentence_labels=(batch["sentence_labels"]
                                             if config.objective != "none" else None))
            out.loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)
            loss = out.loss.item()
            if not np.isfinite(loss):  # NaN features would only fail later, obscurely
                raise FloatingPointError(f"the run diverged at step {step + 1}: training "
                                         f"loss {loss}; lower the learning rate")
            state["seconds"] += time.perf_counter() - started
            state["tokens"] += int(batch["attention_mask"].sum())
            state["step"] = step + 1
            bar.update(1)
            bar.set_postfix(loss=f"{loss:.2f}",
                            tok_s=f"{state['tokens'] / max(state['seconds'], 1e-9):,.0f}")
            if config.curve_every and state["step"] % config.curve_every == 0:
                examples = min(curve_examples or config.eval_examples, config.eval_examples)
                point = evaluate(model, held_out, config.objective, device, limit=examples)
                state["curve"].append({"step": state["step"], "seconds": state["seconds"],
                                       "tokens": state["tokens"], "train_loss": loss,
                                       "examples": examples, **point})
            if state["step"] % checkpoint_every == 0:
                _save_checkpoint(checkpoint, model, optimizer, state)
    finally:
        stream.close()
        bar.close()
    metrics = evaluate(model, held_out, config.objective, device)
    metrics.update(steps=state["step"], train_seconds=state["seconds"], tokens=state["tokens"],
                   tokens_per_second=state["tokens"] / max(state["seconds"], 1e-9))
    metrics.update(probe_sentence_tasks(model, config, tokenizer, train_corpus, held_out,
                                        device))
    metrics.update(layer_transitions(model, held_out, device))
    metrics.update(training_split_mlm(model, config, tokenizer, train_corpus, device))
    if config.finetune is not None:
        state_dict = {k: v.detach().cpu() for k, v in model.state_dict().items()}
        for task in ("sentiment", "genre"):
            outcome = finetune(state_dict, config.model, task, config.finetune, config.seed,
                               device, tokenizer)
            metrics[f"{task}_accuracy"] = outcome["test_accuracy"]
            metrics[f"{task}_validation_accuracy"] = outcome["validation_accuracy"]
            metrics[f"{task}_majority"] = outcome["test_majority"]
        metrics["downstream_average"] = (metrics["sentiment_accuracy"]
                                         + metrics["genre_accuracy"]) / 2
    return {"metrics": metrics, "curve": state["curve"], "model": model}


def run(config: RunConfig, store: Path, quiet: bool = False, fresh: bool = False,
        curve_examples: int | None = CURVE_EXAMPLES) -> dict:
    """The stored result of ``config`` under ``store``, training it if missing."""
    resolved = config.to_dict()
    path = result_path(store, config)
    name = path.stem
    fresh = fresh or os.environ.get("ALBERT_RERUN_FRESH") == "1"
    if not fresh:
        stored = load_result(path, resolved)
        if stored is not None:
            return stored
    workdir = store / "checkpoints" / name
    started = time.time()
    outcome = pretrain(config, workdir, quiet=quiet, curve_examples=curve_examples)
    result = {"config": resolved, "hash": name, "metrics": outcome["metrics"],
              "curve": outcome["curve"], "provenance": record(),
              "wall_seconds": time.time() - started}
    atomic_write_json(path, result)
    torch.save(outcome["model"].state_dict(), store / "checkpoints" / name / "final.pt")
    (workdir / "checkpoint.pt").unlink(missing_ok=True)
    return result


def _run_job(job):
    label, config, store, options, threads, deadline = job
    if time.time() > deadline:
        return label, None
    if threads:
        os.environ["ALBERT_RERUN_THREADS"] = str(threads)
    started = time.time()
    try:
        result = run(config, store, quiet=True, **options)
    except Exception as error:  # one failed run must not stop the others
        return label, f"{type(error).__name__}: {error}"
    return label, (result, time.time() - started)


def run_many(jobs, workers: int, seconds: float = float("inf"), threads: int | None = None):
    """Train (label, config, store, run options) jobs, ``workers`` processes side by side
    (in this process when ``workers`` <= 1), each run at ``threads`` torch threads (None:
    as configured); no job starts after ``seconds``. Yields (label, outcome) as runs end:
    outcome is None for a job not started by the deadline, the error's text for a run
    that failed (the others go on), else (result, wall seconds)."""
    deadline = time.time() + seconds
    tasks = [(*job, threads, deadline) for job in jobs]
    if workers <= 1:
        yield from map(_run_job, tasks)
        return
    from multiprocessing import get_context
    with get_context("spawn").Pool(workers, maxtasksperchild=1) as pool:
        yield from pool.imap_unordered(_run_job, tasks)


def main(argv=None) -> int:
    """Pretrain one model at a profile and print its metrics (stored results reused)."""
    import argparse
    import json

    from .profiles import PROFILES, pretraining_config
    from .results import results_dir
    parser = argparse.ArgumentParser(description=main.__doc__)
    parser.add_argument("--profile", default="smoke", choices=tuple(PROFILES))
    parser.add_argument("--style", default="albert", choices=("albert", "bert"))
    parser.add_argument("--objective", default="sop", choices=OBJECTIVES)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--device", default="auto", choices=("auto", "cpu", "cuda"))
    parser.add_argument("--fresh", action="store_true", help="retrain even if stored")
    parser.add_argument("--store", default=None, help="results folder (default: data/results)")
    args = parser.parse_args(argv)
    config = pretraining_config(args.profile, args.style, objective=args.objective,
                                seed=args.seed, device=args.device)
    store = Path(args.store) / args.profile if args.store else results_dir(args.profile)
    result = run(config, store, fresh=args.fresh)
    print(json.dumps({"hash": result["hash"], **result["metrics"]}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
