"""Downstream evaluation: fine-tuning, and frozen-encoder probes.

Fine-tuning, one protocol for every model (stated in the methods chapter): the whole
training split, AdamW, linear warm-up over 10% of the steps then linear decay, batch
32, batches of similar lengths (less padding, the same examples), classifier dropout
0.1, ``epochs`` passes; the validation split is scored after every pass and the test
predictions of the best pass are kept (early stopping on validation). The learning
rate is one number per kind of start (pretrained or random initialization), picked on
validation from a small grid by ``learning_rate_pilot`` before any reported run.

Probes read the frozen encoder: mean-pooled final hidden states (or, for sentence
pairs, the [CLS] state and the mean of each segment), standardized, into a
scikit-learn logistic regression whose regularization is picked on validation.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np
import torch

from ..data.files import load_task
from ..data.tokenizer import Tokenizer
from ..model.modeling import AlbertForSequenceClassification

PROBE_C_GRID = (0.01, 0.1, 1.0)


@dataclass(frozen=True)
class FinetuneProtocol:
    learning_rate: float = 3e-4  # pretrained encoders
    untrained_learning_rate: float = 1e-3  # the random-initialization controls
    epochs: int = 3
    batch_size: int = 32
    max_train_examples: int = 0  # 0: the whole training split
    max_seq_length: int = 128
    warmup_fraction: float = 0.1
    classifier_dropout: float = 0.1
    weight_decay: float = 0.01

    def __post_init__(self):
        for name in ("epochs", "batch_size", "max_seq_length"):
            if getattr(self, name) < 1:
                raise ValueError(f"FinetuneProtocol.{name} must be >= 1")
        if self.learning_rate <= 0 or self.untrained_learning_rate <= 0:
            raise ValueError("FinetuneProtocol learning rates must be > 0")

    def to_dict(self):
        return asdict(self)


def encode_texts(tokenizer: Tokenizer, texts: list, max_seq_length: int) -> list:
    """[CLS] text [SEP], truncated; returns a list of id lists."""
    body = max_seq_length - 2
    return [[tokenizer.cls_id] + ids[:body] + [tokenizer.sep_id]
            for ids in tokenizer.encode(texts)]


def padded(encoded: list, rows) -> tuple:
    """(ids, attention mask) of ``rows``, padded to their longest."""
    T = max(len(encoded[r]) for r in rows)
    ids = torch.zeros(len(rows), T, dtype=torch.long)
    mask = torch.zeros(len(rows), T, dtype=torch.long)
    for k, r in enumerate(rows):
        ids[k, :len(encoded[r])] = torch.tensor(encoded[r])
        mask[k, :len(encoded[r])] = 1
    return ids, mask


def length_batches(encoded: list, batch_size: int, rng) -> list:
    """Batches of similar lengths in a random order: the examples are shuffled, cut into
    pools of 50 batches, sorted by length within a pool, batched, and the batches
    shuffled (padding falls, the examples and their number per epoch do not change)."""
    order = rng.permutation(len(encoded))
    pool = 50 * batch_size
    batches = []
    for start in range(0, len(order), pool):
        part = sorted(order[start:start + pool], key=lambda r: len(encoded[r]))
        batches += [part[i:i + batch_size] for i in range(0, len(part), batch_size)]
    return [batches[i] for i in rng.permutation(len(batches))]


@torch.no_grad()
def predict(model, encoded: list, device, batch_size: int = 128) -> np.ndarray:
    model.eval()
    order = np.argsort([len(x) for x in encoded], kind="stable")
    out = np.empty(len(encoded), dtype=np.int64)
    for start in range(0, len(order), batch_size):
        rows = order[start:start + batch_size]
        ids, mask = padded(encoded, rows)
        _, logits = model(ids.to(device), attention_mask=mask.to(device))
        out[rows] = logits.argmax(-1).cpu().numpy()
    return out


def correctness(predictions, labels) -> str:
    """Per-item 1/0 as one string: the paired bootstrap over items reads it."""
    return "".join("1" if p == y else "0" for p, y in zip(predictions, labels))


def subsample(texts, labels, limit: int, seed: int = 0):
    """``limit`` examples drawn with a fixed seed (all when ``limit`` is 0): the same
    subset wherever a smoke evaluation or its controls need one."""
    if not limit or limit >= len(texts):
        return texts, labels
    rows = np.random.default_rng(seed).permutation(len(texts))[:limit]
    return [texts[r] for r in rows], [labels[r] for r in rows]


def finetune(encoder_state: dict, model_config, task: str, protocol: FinetuneProtocol,
             seed: int, device, tokenizer: Tokenizer, learning_rate: float,
             eval_examples: int = 0) -> dict:
    """Fine-tune a copy of an encoder on ``task``; the test predictions of the pass with
    the best validation accuracy, and every pass's validation accuracy (``eval_examples``
    > 0 scores only the first that many of each split: smoke runs)."""
    texts, labels, names = load_task(task, "train")
    texts, labels = subsample(texts, labels, protocol.max_train_examples, seed)
    config = model_config.replace(classifier_dropout_prob=protocol.classifier_dropout)
    torch.manual_seed(seed)
    model = AlbertForSequenceClassification(config, num_labels=len(names)).to(device)
    model.albert.load_state_dict({k[len("albert."):]: v for k, v in encoder_state.items()
                                  if k.startswith("albert.")})
    encoded = encode_texts(tokenizer, texts, protocol.max_seq_length)
    splits = {}
    for split in ("validation", "test"):
        x, y = load_task(task, split)[:2]
        x, y = subsample(x, y, eval_examples)
        splits[split] = (encode_texts(tokenizer, x, protocol.max_seq_length), np.array(y))
    rng = np.random.default_rng(seed)
    epochs = [length_batches(encoded, protocol.batch_size, rng)
              for _ in range(protocol.epochs)]
    steps = sum(len(e) for e in epochs)
    warmup = max(1, int(protocol.warmup_fraction * steps))
    optimizer = torch.optim.AdamW(model.parameters(), lr=learning_rate,
                                  weight_decay=protocol.weight_decay)
    schedule = torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda s: min((s + 1) / warmup, max(0.0, (steps - s) / (steps - warmup))))
    y_train = torch.tensor(labels)
    history, best = [], None
    for epoch, batches in enumerate(epochs):
        model.train()
        for rows in batches:
            ids, mask = padded(encoded, rows)
            loss, _ = model(ids.to(device), attention_mask=mask.to(device),
                            labels=y_train[rows].to(device))
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            schedule.step()
            optimizer.zero_grad(set_to_none=True)
        validation = float((predict(model, splits["validation"][0], device)
                            == splits["validation"][1]).mean())
        history.append(validation)
        if best is None or validation > best[0]:
            best = (validation, epoch + 1, predict(model, splits["test"][0], device))
    test_y = splits["test"][1]
    return {"task": task, "train_examples": len(encoded), "steps": steps,
            "learning_rate": learning_rate, "validation_by_epoch": history,
            "best_epoch": best[1], "validation_accuracy": best[0],
            "test_accuracy": float((best[2] == test_y).mean()),
            "test_correct": correctness(best[2], test_y)}


def learning_rate_pilot(encoder_states: dict, model_config, task: str,
                        protocol: FinetuneProtocol, grid, device, tokenizer) -> dict:
    """Validation accuracy of fine-tuning each named encoder (e.g. one pretrained, one
    untrained) at each learning rate of ``grid``: the pick behind the protocol's rates."""
    rows = []
    for name, state in encoder_states.items():
        for lr in grid:
            outcome = finetune(state, model_config, task, protocol, 0, device, tokenizer, lr)
            rows.append({"encoder": name, "learning_rate": lr,
                         "validation_accuracy": outcome["validation_accuracy"],
                         "best_epoch": outcome["best_epoch"]})
    best = {}
    for row in rows:
        if row["encoder"] not in best or row["validation_accuracy"] > best[row["encoder"]][1]:
            best[row["encoder"]] = (row["learning_rate"], row["validation_accuracy"])
    return {"rows": rows, "chosen": {k: v[0] for k, v in best.items()}}


# -- frozen-encoder probes ------------------------------------------------------------

@torch.no_grad()
def encoder_states(model, inputs: dict, device, batch_size: int = 128):
    """Final hidden states and the sentence-pair head's prediction, batch by batch, in
    batches of similar lengths each trimmed to its longest (no work on padding); yields
    (rows, hidden states, inputs, head predictions), float32 on the CPU."""
    model.eval()
    lengths = inputs["attention_mask"].sum(1)
    order = torch.argsort(lengths, stable=True)
    for start in range(0, len(order), batch_size):
        rows = order[start:start + batch_size]
        T = int(lengths[rows].max())
        batch = {k: v[rows, :T].to(device) for k, v in inputs.items()}
        sequence, pooled, _ = model.albert(batch["input_ids"], batch["token_type_ids"],
                                           batch["attention_mask"])
        head = model.sentence_head(pooled).argmax(-1) if hasattr(model, "sentence_head") else None
        yield (rows, sequence.float().cpu(), {k: v.cpu() for k, v in batch.items()},
               None if head is None else head.cpu())


def _in_order(parts: list, n: int) -> np.ndarray:
    out = None
    for rows, values in parts:
        if out is None:
            out = np.empty((n, *values.shape[1:]), dtype=values.dtype)
        out[rows.numpy()] = values
    return out


def mean_pooled(model, inputs: dict, device) -> np.ndarray:
    """Mean of the final hidden states over the non-padding tokens."""
    parts = []
    for rows, sequence, batch, _ in encoder_states(model, inputs, device):
        mask = batch["attention_mask"][..., None].float()
        parts.append((rows, ((sequence * mask).sum(1) / mask.sum(1)).numpy()))
    return _in_order(parts, len(inputs["input_ids"]))


def pair_features(model, inputs: dict, device, with_head: bool = False):
    """For a segment pair: [CLS] state, mean of segment A, mean of segment B; with
    ``with_head`` also the model's own sentence-pair head's predictions (same pass)."""
    parts, heads = [], []
    for rows, sequence, batch, head in encoder_states(model, inputs, device):
        mask = batch["attention_mask"].bool()
        b = (batch["token_type_ids"] == 1) & mask
        a = (batch["token_type_ids"] == 0) & mask
        a[:, 0] = False  # [CLS] is reported on its own
        pieces = [sequence[:, 0]]
        for segment in (a, b):
            w = segment[..., None].float()
            pieces.append((sequence * w).sum(1) / w.sum(1).clamp(min=1))
        parts.append((rows, torch.cat(pieces, -1).numpy()))
        heads.append((rows, head.numpy()))
    features = _in_order(parts, len(inputs["input_ids"]))
    return (features, _in_order(heads, len(inputs["input_ids"]))) if with_head else features


def logistic_probe(train_x, train_y, test_x, test_y, validation=None) -> dict:
    """Accuracy of a standardized logistic regression (scikit-learn) on frozen features;
    with ``validation`` (x, y) the regularization C is picked on it from PROBE_C_GRID,
    else C = 1. Returns the test accuracy, per-item correctness and C."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    def fit(C):
        return make_pipeline(StandardScaler(), LogisticRegression(max_iter=1000, C=C)).fit(
            train_x, train_y)

    if validation is None:
        chosen, probe = 1.0, fit(1.0)
    else:
        scored = [(fit(C), C) for C in PROBE_C_GRID]
        probe, chosen = max(scored, key=lambda pc: pc[0].score(*validation))
    predictions = probe.predict(test_x)
    return {"accuracy": float((predictions == np.asarray(test_y)).mean()), "C": chosen,
            "correct": correctness(predictions, test_y)}
