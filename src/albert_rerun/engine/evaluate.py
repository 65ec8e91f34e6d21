"""Evaluation of a stored pretrained model, apart from its pretraining.

Every model is scored on the same held-out sets, whatever its pretraining objective:

- **MLM**: one set of in-order segment pairs from the validation documents, masked
  once by the numpy reference (``data.masking``); the primary metric is the
  cross-entropy (nats) at the positions shown as [MASK], accuracy beside it; per-sequence
  sums are kept for intervals that resample sequences;
- **SOP and NSP**: one set of SOP pairs and one of NSP pairs from the validation
  documents, scored by the model's own sentence-pair head (meaningful where it was
  trained with that head) and by a frozen-encoder probe trained on pairs from the
  training documents, for every model;
- **layer transitions** (Figure 1) on the first held-out sequences;
- the **training-split MLM loss** (for the dropout claim's overfitting gap);
- **downstream**: fine-tuned sentiment (``finetune.finetune``) and frozen-encoder probes
  of both tasks;
- apart, under its own key: **SOP and NSP without the segment-cut cue**
  (``CueFreeEval``, pairs of whole sentences from ``data.cue_free``).

Results are stored keyed by (pretraining hash, evaluation hash): ``store.eval_path``.
"""
from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass, field
from functools import lru_cache, partial

import numpy as np
import torch
import torch.nn.functional as F

from ..data.corpus import create_instances, tokenize_split
from ..data.cue_free import CUE_FREE_SEED, cue_free_pairs
from ..data.files import TASKS, load_task
from ..data.masking import MaskingConfig, mask_batch, tokenizer_arrays
from ..data.tokenizer import Tokenizer
from ..model.modeling import AlbertForPreTraining
from .finetune import (FinetuneProtocol, encode_texts, finetune, logistic_probe, mean_pooled,
                       padded, pair_features, subsample)
from .provenance import record
from .store import atomic_write_json, config_hash, eval_path, load_weights, stored_eval

MLM_SEED, PAIR_SEED, PROBE_SEED, TRAIN_MLM_SEED = 12345, 23456, 999, 777


@dataclass(frozen=True)
class EvalConfig:
    """Everything that determines an evaluation's result, given the weights."""

    max_seq_length: int = 128
    max_predictions: int = 20
    vocab_size: int = 8000
    mlm_sequences: int = 4096  # the common held-out MLM set (at most the split's)
    pair_examples: int = 1024  # each of the common SOP and NSP test sets
    probe_pairs: int = 2048  # training pairs for the SOP/NSP probes
    transition_sequences: int = 64
    train_mlm_sequences: int = 512
    task_examples: int = 0  # per split of the downstream tasks (0: all; smoke: a few)
    probe_train_examples: int = 2000  # training examples of the downstream probes
    probe_tasks: tuple = ("sentiment", "genre")  # frozen-encoder probes
    finetune_tasks: tuple = ("sentiment",)
    finetune: FinetuneProtocol | None = field(default_factory=FinetuneProtocol)

    def __post_init__(self):
        for name, low in (("max_seq_length", 8), ("max_predictions", 1), ("vocab_size", 1),
                          ("mlm_sequences", 1), ("pair_examples", 1), ("probe_pairs", 2),
                          ("transition_sequences", 1), ("train_mlm_sequences", 1),
                          ("task_examples", 0), ("probe_train_examples", 0)):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < low:
                raise ValueError(f"EvalConfig.{name} must be an integer >= {low}, "
                                 f"got {value!r}")
        if self.max_predictions > self.max_seq_length:
            raise ValueError("EvalConfig.max_predictions exceeds max_seq_length")
        for name in ("probe_tasks", "finetune_tasks"):
            tasks = getattr(self, name)
            if isinstance(tasks, str) or not set(tasks) <= set(TASKS):
                raise ValueError(f"EvalConfig.{name} must be a tuple of tasks from "
                                 f"{tuple(TASKS)}, got {tasks!r}")
        if self.finetune is not None and not isinstance(self.finetune, FinetuneProtocol):
            raise ValueError(f"EvalConfig.finetune must be a FinetuneProtocol or None, got "
                             f"{type(self.finetune).__name__}")

    def to_dict(self) -> dict:
        values = dataclasses.asdict(self)
        values["probe_tasks"], values["finetune_tasks"] = (list(self.probe_tasks),
                                                           list(self.finetune_tasks))
        return values

    def replace(self, **changes) -> "EvalConfig":
        return dataclasses.replace(self, **changes)

    @property
    def key(self) -> str:
        return config_hash(self.to_dict())


# -- the common held-out sets ----------------------------------------------------------

def _tensors(instances, rows, ids=None) -> dict:
    T = instances.input_ids.shape[1]
    source = instances.input_ids[rows] if ids is None else ids
    return {"input_ids": torch.from_numpy(source.astype(np.int64)),
            "token_type_ids": torch.from_numpy(instances.token_type_ids[rows].astype(np.int64)),
            "attention_mask": torch.from_numpy(
                (np.arange(T)[None, :] < instances.lengths[rows, None]).astype(np.int64))}


@lru_cache(maxsize=8)
def mlm_set(max_seq_length: int, max_predictions: int, sequences: int,
            vocab_size: int = 8000, split: str = "validation", seed: int = MLM_SEED) -> dict:
    """In-order pairs of ``split``, masked once (numpy reference, fixed seed). The first
    k sequences of a larger set are the k of a smaller one (curve points use them)."""
    tokenizer = Tokenizer(vocab_size=vocab_size)
    instances = create_instances(tokenize_split(split, tokenizer), tokenizer, "none",
                                 max_seq_length, seed=seed, limit=sequences)
    rows = np.arange(len(instances))
    ids, labels = mask_batch(instances, rows, tokenizer_arrays(tokenizer),
                             MaskingConfig(max_predictions=max_predictions),
                             np.random.default_rng(seed + 1))
    return {**_tensors(instances, rows, ids),
            "original_ids": torch.from_numpy(instances.input_ids.astype(np.int64)),
            "mlm_labels": torch.from_numpy(labels), "mask_id": tokenizer.mask_id}


@lru_cache(maxsize=8)
def pair_set(task: str, max_seq_length: int, examples: int, vocab_size: int = 8000,
             split: str = "validation", seed: int = PAIR_SEED) -> dict:
    """Unmasked SOP or NSP pairs with their labels."""
    tokenizer = Tokenizer(vocab_size=vocab_size)
    instances = create_instances(tokenize_split(split, tokenizer), tokenizer, task,
                                 max_seq_length, seed=seed, limit=examples)
    rows = np.arange(len(instances))
    return {**_tensors(instances, rows),
            "labels": instances.sentence_labels.copy()}


@torch.no_grad()
def score_mlm(model, data: dict, device, limit: int | None = None,
              batch_size: int = 128) -> dict:
    """Cross-entropy and accuracy over all predicted positions and at those shown as
    [MASK]; with per-sequence sums of the loss at [MASK] and of its count."""
    model.eval()
    n = len(data["input_ids"]) if limit is None else min(limit, len(data["input_ids"]))
    loss_at_mask = np.zeros(n)
    count_at_mask = np.zeros(n, dtype=np.int64)
    totals = {"loss": 0.0, "correct": 0, "n": 0, "correct_at_mask": 0}
    for start in range(0, n, batch_size):
        stop = min(n, start + batch_size)
        batch = {k: data[k][start:stop].to(device) for k in
                 ("input_ids", "token_type_ids", "attention_mask", "mlm_labels")}
        out = model(batch["input_ids"], batch["token_type_ids"], batch["attention_mask"],
                    mlm_labels=batch["mlm_labels"])
        selected = batch["mlm_labels"] != -100
        targets = batch["mlm_labels"][selected]
        losses = F.cross_entropy(out.mlm_logits.float(), targets, reduction="none")
        hits = out.mlm_logits.argmax(-1) == targets
        at_mask = batch["input_ids"][selected] == data["mask_id"]
        row = selected.nonzero()[:, 0].cpu().numpy() + start
        np.add.at(loss_at_mask, row[at_mask.cpu().numpy()],
                  losses[at_mask].double().cpu().numpy())
        np.add.at(count_at_mask, row[at_mask.cpu().numpy()], 1)
        totals["loss"] += float(losses.double().sum())
        totals["correct"] += int(hits.sum())
        totals["n"] += int(targets.numel())
        totals["correct_at_mask"] += int(hits[at_mask].sum())
    model.train()
    masked = int(count_at_mask.sum())
    return {"mlm_loss": totals["loss"] / totals["n"],
            "mlm_accuracy": totals["correct"] / totals["n"],
            "mlm_loss_at_mask": float(loss_at_mask.sum() / max(1, masked)),
            "mlm_accuracy_at_mask": totals["correct_at_mask"] / max(1, masked),
            "sequence_loss_at_mask": loss_at_mask, "sequence_count_at_mask": count_at_mask}


@torch.no_grad()
def layer_transitions(model, data: dict, device, limit: int = 64) -> dict:
    """Figure 1's measure: L2 distance and angle (degrees) between each layer's input and
    output, per token, averaged over the non-padding tokens of held-out sequences. The
    first layer's input is the embedding output (after the E -> H projection where
    there is one)."""
    model.eval()
    inputs = {k: data[k][:limit].to(device) for k in ("token_type_ids", "attention_mask")}
    states = model.albert(data["original_ids"][:limit].to(device), inputs["token_type_ids"],
                          inputs["attention_mask"], output_hidden_states=True)[2]
    keep = inputs["attention_mask"].bool()
    distances, angles = [], []
    for before, after in zip(states[:-1], states[1:]):
        a, b = before.double()[keep], after.double()[keep]  # arccos near 1 needs float64
        distances.append((b - a).norm(dim=-1).mean().item())
        cosine = F.cosine_similarity(a, b, dim=-1).clamp(-1, 1)
        angles.append(torch.rad2deg(torch.arccos(cosine)).mean().item())
    model.train()
    return {"transition_l2": distances, "transition_angle": angles}


def _string_mean(correct: str) -> float:
    return sum(c == "1" for c in correct) / len(correct)


def sentence_pairs(model, config: EvalConfig, device) -> dict:
    """Own-head and probe accuracy on the common SOP and NSP test pairs."""
    metrics = {}
    keys = ("input_ids", "token_type_ids", "attention_mask")
    for task in ("sop", "nsp"):
        test = pair_set(task, config.max_seq_length, config.pair_examples, config.vocab_size)
        train = pair_set(task, config.max_seq_length, config.probe_pairs, config.vocab_size,
                         split="train", seed=PROBE_SEED)
        test_x, head = pair_features(model, {k: test[k] for k in keys}, device, with_head=True)
        probe = logistic_probe(pair_features(model, {k: train[k] for k in keys}, device),
                               train["labels"], test_x, test["labels"])
        head_correct = "".join("1" if p == y else "0" for p, y in zip(head, test["labels"]))
        share = float(test["labels"].mean())
        metrics.update({f"{task}_accuracy_head": _string_mean(head_correct),
                        f"{task}_head_correct": head_correct,
                        f"{task}_accuracy_probe": probe["accuracy"],
                        f"{task}_probe_correct": probe["correct"],
                        f"{task}_majority": max(share, 1 - share)})
    model.train()
    return metrics


@lru_cache(maxsize=8)
def _task_inputs(task: str, split: str, max_seq_length: int, vocab_size: int,
                 examples: int = 0):
    texts, labels, _ = load_task(task, split)
    texts, labels = subsample(texts, labels, examples)
    encoded = encode_texts(Tokenizer(vocab_size=vocab_size), texts, max_seq_length)
    ids, mask = padded(encoded, range(len(encoded)))
    return {"input_ids": ids, "token_type_ids": torch.zeros_like(ids),
            "attention_mask": mask}, np.array(labels)


def downstream_probes(model, config: EvalConfig, device) -> dict:
    metrics = {}
    for task in config.probe_tasks:
        features = {}
        for split in ("train", "validation", "test"):
            examples = config.task_examples or (config.probe_train_examples
                                                if split == "train" else 0)
            inputs, labels = _task_inputs(task, split, config.max_seq_length, config.vocab_size,
                                          examples)
            features[split] = (mean_pooled(model, inputs, device), labels)
        probe = logistic_probe(*features["train"], *features["test"],
                               validation=features["validation"])
        metrics.update({f"{task}_probe_accuracy": probe["accuracy"],
                        f"{task}_probe_correct": probe["correct"], f"{task}_probe_C": probe["C"]})
    return metrics


@torch.no_grad()
def train_split_mlm(model, config: EvalConfig, device) -> dict:
    """MLM loss on fixed training-split sequences (the overfitting gap's other half)."""
    data = mlm_set(config.max_seq_length, config.max_predictions, config.train_mlm_sequences,
                   config.vocab_size, split="train", seed=TRAIN_MLM_SEED)
    scored = score_mlm(model, data, device)
    return {"train_mlm_loss": scored["mlm_loss"],
            "train_mlm_loss_at_mask": scored["mlm_loss_at_mask"]}


def evaluate(model, model_config, config: EvalConfig, device, seed: int,
             untrained: bool) -> dict:
    """Every metric of one model (see the module's docstring)."""
    tokenizer = Tokenizer(vocab_size=config.vocab_size)
    data = mlm_set(config.max_seq_length, config.max_predictions, config.mlm_sequences,
                   config.vocab_size)
    mlm = score_mlm(model, data, device)
    metrics = {k: v for k, v in mlm.items() if not k.startswith("sequence_")}
    metrics["sequence_loss_at_mask"] = [round(float(x), 4) for x in mlm["sequence_loss_at_mask"]]
    metrics["mlm_sequences"] = len(data["input_ids"])
    metrics.update(sentence_pairs(model, config, device))
    metrics.update(layer_transitions(model, data, device, config.transition_sequences))
    metrics.update(train_split_mlm(model, config, device))
    metrics.update(downstream_probes(model, config, device))
    if config.finetune is not None:
        metrics.update(finetuned(model, model_config, config.finetune, config.finetune_tasks,
                                 config.task_examples, config.vocab_size, device, seed,
                                 untrained))
    return metrics


def finetuned(model, model_config, protocol: FinetuneProtocol, tasks, task_examples: int,
              vocab_size: int, device, seed: int, untrained: bool) -> dict:
    """Test accuracy of the model fine-tuned on each task (``finetune.finetune``), at the
    protocol's rate for pretrained or for untrained encoders."""
    tokenizer = Tokenizer(vocab_size=vocab_size)
    state = {k: v.detach().cpu() for k, v in model.state_dict().items()}
    lr = protocol.untrained_learning_rate if untrained else protocol.learning_rate
    metrics = {}
    for task in tasks:
        outcome = finetune(state, model_config, task, protocol, seed, device, tokenizer, lr,
                           task_examples)
        metrics.update({f"{task}_accuracy": outcome["test_accuracy"],
                        f"{task}_correct": outcome["test_correct"],
                        f"{task}_validation_accuracy": outcome["validation_accuracy"],
                        f"{task}_validation_by_epoch": outcome["validation_by_epoch"],
                        f"{task}_best_epoch": outcome["best_epoch"]})
    return metrics


@dataclass(frozen=True)
class FinetuneEval:
    """A fine-tuning evaluation, stored apart from the probes' (``EvalConfig``): it costs
    minutes a model where the probes cost seconds, so the driver runs it where a
    downstream comparison can be made (see claims.driver)."""

    protocol: FinetuneProtocol = field(default_factory=FinetuneProtocol)
    tasks: tuple = ("sentiment",)
    task_examples: int = 0
    vocab_size: int = 8000

    def __post_init__(self):
        if not isinstance(self.protocol, FinetuneProtocol):
            raise ValueError("FinetuneEval.protocol must be a FinetuneProtocol")
        if isinstance(self.tasks, str) or not set(self.tasks) <= set(TASKS):
            raise ValueError(f"FinetuneEval.tasks must be a tuple of tasks from "
                             f"{tuple(TASKS)}, got {self.tasks!r}")

    def to_dict(self) -> dict:
        return {**dataclasses.asdict(self), "tasks": list(self.tasks)}

    @property
    def key(self) -> str:
        return config_hash(self.to_dict())

    def measure(self, model, model_config, device, seed: int, untrained: bool) -> dict:
        return finetuned(model, model_config, self.protocol, self.tasks, self.task_examples,
                         self.vocab_size, device, seed, untrained)


@dataclass(frozen=True)
class CueFreeEval:
    """SOP and NSP on pairs without the segment-cut cue (``data.cue_free``): every
    segment is whole sentences, so where a segment begins or ends does not tell the
    label. Stored apart from ``EvalConfig``'s evaluation (whose hash, and so every stored
    evaluation, it leaves alone). The probe (``logistic_probe`` on ``pair_features``,
    C 1, as ``sentence_pairs``) is trained on the pairs of one half of the split's
    documents and scored on the other half's; the model's own head is scored on the
    same test pairs."""

    max_seq_length: int = 64
    vocab_size: int = 8000
    seed: int = CUE_FREE_SEED  # the document halves and the pairs
    split: str = "validation"

    def __post_init__(self):
        for name, low in (("max_seq_length", 8), ("vocab_size", 1), ("seed", 0)):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < low:
                raise ValueError(f"CueFreeEval.{name} must be an integer >= {low}, "
                                 f"got {value!r}")

    def to_dict(self) -> dict:
        return {"kind": "cue_free", **dataclasses.asdict(self)}

    @property
    def key(self) -> str:
        return config_hash(self.to_dict())

    def measure(self, model, model_config, device, seed: int, untrained: bool) -> dict:
        return cue_free_pairs_metrics(model, self, device)


def cue_free_pairs_metrics(model, config: CueFreeEval, device) -> dict:
    """``{task}_cuefree_*`` for sop and nsp: probe and own-head accuracy with per-item
    correctness (test pairs in order), the majority share, and the pair counts."""
    metrics = {}
    keys = ("input_ids", "token_type_ids", "attention_mask")
    for task in ("sop", "nsp"):
        train, test = (cue_free_pairs(task, part, config.max_seq_length, config.vocab_size,
                                      config.seed, config.split) for part in ("train", "test"))
        test_x, head = pair_features(model, {k: test[k] for k in keys}, device, with_head=True)
        probe = logistic_probe(pair_features(model, {k: train[k] for k in keys}, device),
                               train["labels"], test_x, test["labels"])
        head_correct = "".join("1" if p == y else "0" for p, y in zip(head, test["labels"]))
        share = float(test["labels"].mean())
        metrics.update({f"{task}_cuefree_accuracy_probe": probe["accuracy"],
                        f"{task}_cuefree_probe_correct": probe["correct"],
                        f"{task}_cuefree_accuracy_head": _string_mean(head_correct),
                        f"{task}_cuefree_head_correct": head_correct,
                        f"{task}_cuefree_majority": max(share, 1 - share),
                        f"{task}_cuefree_test_pairs": len(test["labels"]),
                        f"{task}_cuefree_train_pairs": len(train["labels"])})
    model.train()
    return metrics


def evaluate_stored(store, pretrain_result: dict, config, device, fresh: bool = False) -> dict:
    """The stored evaluation of a stored pretraining run, computing it if missing: an
    ``EvalConfig``'s (``evaluate``), or that of any config with a ``measure`` method
    (``FinetuneEval``, ``CueFreeEval``); the weights are read (and checked against their
    SHA-256) before anything runs."""
    from .config import PretrainConfig
    if not fresh:
        stored = stored_eval(store, pretrain_result["hash"], config)
        if stored is not None:
            return stored
    pretrain_config = PretrainConfig.from_dict(pretrain_result["config"])
    state = load_weights(store, pretrain_result)
    model = AlbertForPreTraining(pretrain_config.model).to(device)
    model.load_state_dict(state)
    started = time.time()
    measure = (config.measure if callable(getattr(config, "measure", None))
               else partial(evaluate, config=config))
    metrics = measure(model=model, model_config=pretrain_config.model, device=device,
                      seed=pretrain_config.seed, untrained=pretrain_config.max_steps == 0)
    result = {"pretrain_hash": pretrain_result["hash"], "eval_config": config.to_dict(),
              "eval_hash": config.key, "metrics": metrics, "provenance": record(),
              "wall_seconds": time.time() - started}
    atomic_write_json(eval_path(store, pretrain_result["hash"], config), result)
    return result
