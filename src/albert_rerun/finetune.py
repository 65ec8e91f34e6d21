"""Downstream evaluation: fine-tuning on the two tasks and frozen-encoder probes.

One fixed protocol for every pretrained model (stated in the methods chapter):
AdamW, linear warm-up over 10% then linear decay, batch 32, dropout 0.1 on the
classifier only, one pass over the (possibly subsampled) training split, accuracy on
the validation and test splits. No model selection is done on validation.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np
import torch

from .data import load_task
from .model import AlbertForSequenceClassification
from .tokenizer import Tokenizer


@dataclass(frozen=True)
class FinetuneProtocol:
    learning_rate: float = 1e-4
    batch_size: int = 32
    epochs: int = 1
    max_train_examples: int = 0  # 0: the whole training split
    max_eval_examples: int = 0  # 0: the whole validation/test split
    max_seq_length: int = 128
    warmup_fraction: float = 0.1
    classifier_dropout: float = 0.1

    def to_dict(self):
        return asdict(self)


def encode_texts(tokenizer: Tokenizer, texts: list, max_seq_length: int):
    """[CLS] text [SEP], truncated; returns a list of id lists."""
    body = max_seq_length - 2
    return [[tokenizer.cls_id] + ids[:body] + [tokenizer.sep_id]
            for ids in tokenizer.encode(texts)]


def _batches(encoded, labels, order, batch_size):
    for start in range(0, len(order), batch_size):
        rows = order[start:start + batch_size]
        T = max(len(encoded[r]) for r in rows)
        ids = torch.zeros(len(rows), T, dtype=torch.long)
        mask = torch.zeros(len(rows), T, dtype=torch.long)
        for k, r in enumerate(rows):
            ids[k, :len(encoded[r])] = torch.tensor(encoded[r])
            mask[k, :len(encoded[r])] = 1
        yield ids, mask, torch.tensor([labels[r] for r in rows])


def _subsample(texts, labels, limit, seed):
    if not limit or limit >= len(texts):
        return texts, labels
    rows = np.random.default_rng(seed).permutation(len(texts))[:limit]
    return [texts[r] for r in rows], [labels[r] for r in rows]


@torch.no_grad()
def _accuracy(model, encoded, labels, device, batch_size=64):
    model.eval()
    correct = 0
    for ids, mask, y in _batches(encoded, labels, np.arange(len(encoded)), batch_size):
        _, logits = model(ids.to(device), attention_mask=mask.to(device))
        correct += (logits.argmax(-1).cpu() == y).sum().item()
    return correct / len(encoded)


def finetune(encoder_state: dict, model_config, task: str, protocol: FinetuneProtocol,
             seed: int, device, tokenizer: Tokenizer | None = None) -> dict:
    """Fine-tune a copy of a pretrained encoder on ``task``; accuracies on val/test."""
    tokenizer = tokenizer or Tokenizer(vocab_size=model_config.vocab_size)
    texts, labels, names = load_task(task, "train")
    texts, labels = _subsample(texts, labels, protocol.max_train_examples, seed)
    config = model_config.replace(classifier_dropout_prob=protocol.classifier_dropout)
    torch.manual_seed(seed)
    model = AlbertForSequenceClassification(config, num_labels=len(names)).to(device)
    encoder = {k[len("albert."):]: v for k, v in encoder_state.items() if k.startswith("albert.")}
    model.albert.load_state_dict(encoder)
    encoded = encode_texts(tokenizer, texts, protocol.max_seq_length)
    steps = protocol.epochs * -(-len(encoded) // protocol.batch_size)
    warmup = max(1, int(protocol.warmup_fraction * steps))
    optimizer = torch.optim.AdamW(model.parameters(), lr=protocol.learning_rate,
                                  weight_decay=0.01)
    schedule = torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda s: min((s + 1) / warmup, max(0.0, (steps - s) / (steps - warmup))))
    rng = np.random.default_rng(seed)
    model.train()
    for _ in range(protocol.epochs):
        for ids, mask, y in _batches(encoded, labels, rng.permutation(len(encoded)),
                                     protocol.batch_size):
            loss, _ = model(ids.to(device), attention_mask=mask.to(device), labels=y.to(device))
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            schedule.step()
            optimizer.zero_grad(set_to_none=True)
    result = {"task": task, "train_examples": len(encoded), "steps": steps}
    for split in ("validation", "test"):
        x, y = load_task(task, split)[:2]
        x, y = _subsample(x, y, protocol.max_eval_examples, 0)
        result[f"{split}_accuracy"] = _accuracy(model, encode_texts(tokenizer, x, protocol.max_seq_length),
                                                y, device)
        result[f"{split}_majority"] = max(np.bincount(y)) / len(y)
    return result


@torch.no_grad()
def cls_features(model, inputs: dict, device, batch_size: int = 64) -> np.ndarray:
    """Frozen encoder features for a probe: the final hidden state at [CLS]."""
    model.eval()
    out = []
    for start in range(0, len(inputs["input_ids"]), batch_size):
        batch = {k: v[start:start + batch_size].to(device) for k, v in inputs.items()}
        sequence, _, _ = model.albert(batch["input_ids"], batch["token_type_ids"],
                                      batch["attention_mask"])
        out.append(sequence[:, 0].float().cpu().numpy())
    return np.concatenate(out)


def linear_probe(train_x, train_y, test_x, test_y) -> float:
    """Accuracy of a logistic regression on frozen features (scikit-learn)."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler
    probe = make_pipeline(StandardScaler(), LogisticRegression(max_iter=2000, C=1.0))
    probe.fit(train_x, train_y)
    return float(probe.score(test_x, test_y))
