"""Baselines without a neural network: masked-token rungs (add-one unigram, Witten-Bell
left bigram; not below the first, a model has learned nothing; below the second, it reads
more than one neighbour), and a bag-of-words logistic regression on sentence pairs (if it
solves NSP and not SOP, NSP is solvable by topic overlap; what it reads: ``pair_cues``)."""
from __future__ import annotations

import functools
import hashlib
from pathlib import Path

import numpy as np
from scipy import sparse

from ..data.corpus import create_instances, tokenize_split
from ..data.tokenizer import Tokenizer
from ..stats.cache import cached

CODE_DIGEST = hashlib.sha256(Path(__file__).read_bytes()).hexdigest()[:16]


# the training pairs the topic baseline is fitted on, per profile
TOPIC_TRAIN_PAIRS = {"smoke": 400, "cpu": 8000, "cpu-long": 8000, "gpu": 20000}


def segment_pieces(instances, rows=None) -> list:
    """Each pair's two segments as lists of piece ids, in order (read by token type)."""
    rows = range(len(instances.lengths)) if rows is None else rows
    out = []
    for r in rows:
        n = int(instances.lengths[r])
        ids, types = instances.input_ids[r, :n], instances.token_type_ids[r, :n]
        out.append((ids[types == 0][1:-1].tolist(), ids[types == 1][:-1].tolist()))
    return out


def bag_of_words_pairs(instances, rows, tokenizer: Tokenizer) -> sparse.csr_matrix:
    """[A's pieces | B's pieces | pieces in both] as binary indicators, one row per pair
    (``segment_pieces``; [CLS] and [SEP] are never features)."""
    V, special = tokenizer.vocab_size, {tokenizer.cls_id, tokenizer.sep_id}
    segments = segment_pieces(instances, rows)
    data_rows, columns = [], []
    for k, (a, b) in enumerate(segments):
        a, b = set(a) - special, set(b) - special
        for offset, words in ((0, a), (V, b), (2 * V, a & b)):
            columns += [offset + w for w in words]
            data_rows += [k] * len(words)
    values = np.ones(len(columns), dtype=np.float32)
    return sparse.csr_matrix((values, (data_rows, columns)), shape=(len(segments), 3 * V))


def topic_classifier():
    """An untuned logistic regression: every variant is the same model on other inputs."""
    from sklearn.linear_model import LogisticRegression
    return LogisticRegression(max_iter=2000, C=1.0)


def topic_baseline(task: str, eval_config, train_pairs: int, seed: int = 0) -> dict:
    """Held-out accuracy of the bag of words on ``task`` (sop or nsp) pairs, fitted on
    ``train_pairs`` training pairs drawn by ``seed``, with per-pair correctness."""
    from ..engine.evaluate import PROBE_SEED, pair_set
    from ..engine.finetune import correctness

    tokenizer = Tokenizer(vocab_size=eval_config.vocab_size)
    test = _instances(pair_set(task, eval_config.max_seq_length, eval_config.pair_examples,
                               eval_config.vocab_size))
    train = create_instances(tokenize_split("train", tokenizer), tokenizer, task,
                             eval_config.max_seq_length, seed=PROBE_SEED + 1 + seed,
                             limit=train_pairs)
    model = topic_classifier().fit(bag_of_words_pairs(train, None, tokenizer),
                                   train.sentence_labels)
    y_test = test.sentence_labels
    predictions = model.predict(bag_of_words_pairs(test, None, tokenizer))
    share = float(y_test.mean())
    return {"task": task, "seed": seed, "accuracy": float((predictions == y_test).mean()),
            "majority": max(share, 1 - share), "train_pairs": len(train.lengths),
            "test_pairs": len(y_test), "correct": correctness(predictions, y_test)}


def _instances(data: dict):
    """engine.evaluate.pair_set's tensors as Instances."""
    from ..data.corpus import Instances
    return Instances(data["input_ids"].numpy(), data["token_type_ids"].numpy(),
                     data["attention_mask"].numpy().sum(1), np.asarray(data["labels"]))


def downstream_controls(task: str, examples: int = 0) -> dict:
    """A task's controls without pretraining, with per-item correctness: the majority
    label, and a bag-of-words logistic regression (C chosen on validation)."""
    from sklearn.feature_extraction.text import CountVectorizer
    from sklearn.linear_model import LogisticRegression

    from ..data.files import load_task
    from ..engine.finetune import correctness, subsample
    splits = {split: load_task(task, split)[:2] for split in ("train", "validation", "test")}
    if examples:  # the subsets a smoke evaluation scores
        splits = {k: subsample(x, y, examples) for k, (x, y) in splits.items()}
    vectorizer = CountVectorizer(binary=True, ngram_range=(1, 2), min_df=1 if examples else 2)
    x_train = vectorizer.fit_transform(splits["train"][0])
    x_validation, x_test = (vectorizer.transform(splits[s][0]) for s in ("validation", "test"))
    y_train, y_validation, y_test = (np.array(splits[s][1]) for s in
                                     ("train", "validation", "test"))
    fitted = [(LogisticRegression(max_iter=5000, C=C).fit(x_train, y_train), C)
              for C in (0.1, 0.3, 1.0, 3.0)]
    model, C = max(fitted, key=lambda mc: mc[0].score(x_validation, y_validation))
    majority = int(np.bincount(y_train).argmax())
    predictions = model.predict(x_test)
    return {"task": task, "test_examples": len(y_test),
            "majority_accuracy": float((y_test == majority).mean()),
            "majority_correct": correctness(np.full(len(y_test), majority), y_test),
            "bag_of_words_accuracy": float((predictions == y_test).mean()),
            "bag_of_words_correct": correctness(predictions, y_test), "bag_of_words_C": C,
            "bag_of_words_validation_accuracy": float(model.score(x_validation, y_validation))}


class LeftBigram:
    """Left-bigram counts of a token stream, interpolated with an add-one unigram by
    Witten-Bell: p(y | l) = (c(l, y) + T(l) p(y)) / (c(l) + T(l)), T(l) the distinct
    followers of l; a piece never seen on the left gets p(y)."""

    def __init__(self, train_tokens: np.ndarray, vocab_size: int):
        t = np.asarray(train_tokens, dtype=np.int64)  # no copy when already int64
        self.vocab_size = vocab_size
        self.unigram = (np.bincount(t, minlength=vocab_size) + 1.0) / (len(t) + vocab_size)
        self.codes, self.pair_counts = np.unique(t[:-1] * vocab_size + t[1:],
                                                 return_counts=True)
        self.left_counts = np.bincount(t[:-1], minlength=vocab_size).astype(float)
        self.followers = np.bincount(self.codes // vocab_size, minlength=vocab_size)

    def top_followers(self) -> np.ndarray:
        """The most frequent follower of every piece (ties: the smaller id); -1 if none."""
        left, right = self.codes // self.vocab_size, self.codes % self.vocab_size
        order = np.lexsort((right, -self.pair_counts, left))  # left, most frequent, id
        first = np.unique(left[order], return_index=True)[1]
        table = np.full(self.vocab_size, -1, dtype=np.int64)
        table[left[order][first]] = right[order][first]
        return table

    def probability(self, left: np.ndarray, right: np.ndarray) -> np.ndarray:
        """p(right | left), elementwise."""
        left, right = np.asarray(left, dtype=np.int64), np.asarray(right, dtype=np.int64)
        codes = left * self.vocab_size + right
        at = np.clip(np.searchsorted(self.codes, codes), 0, len(self.codes) - 1)
        pair = np.where(self.codes[at] == codes, self.pair_counts[at], 0)
        seen, distinct, p = self.left_counts[left], self.followers[left], self.unigram[right]
        return np.where(seen > 0, (pair + distinct * p) / np.maximum(seen + distinct, 1), p)


def mask_targets(input_ids: np.ndarray, mlm_labels: np.ndarray, mask_id: int) -> tuple:
    """(ids, rows, cols, targets): the labelled positions shown as [MASK]."""
    ids, labels = np.asarray(input_ids), np.asarray(mlm_labels)
    if ids.shape != labels.shape:
        raise ValueError(f"input_ids {ids.shape} and mlm_labels {labels.shape} differ")
    at_mask = (labels != -100) & (ids == mask_id)
    if not at_mask.any():
        raise ValueError("no position is shown as [MASK]")
    rows, cols = np.nonzero(at_mask)
    return ids, rows, cols, labels[rows, cols]


def mask_rungs(input_ids: np.ndarray, mlm_labels: np.ndarray, train_tokens: np.ndarray,
               vocab_size: int, mask_id: int) -> dict:
    """Accuracy and cross-entropy (nats) at the positions shown as [MASK] of the unigram
    and of the left bigram (the unigram where the left neighbour is not visible)."""
    ids, rows, cols, targets = mask_targets(input_ids, mlm_labels, mask_id)
    bigram = LeftBigram(train_tokens, vocab_size)  # one pass over the training counts
    unigram = int(bigram.unigram.argmax())  # add-one keeps the most frequent piece first
    follower = bigram.top_followers()
    left = np.where(cols > 0, ids[rows, np.maximum(cols - 1, 0)], mask_id)
    visible = (cols > 0) & (left != mask_id)
    guess = np.where(visible, follower[left], -1)
    guess = np.where(guess < 0, unigram, guess)
    p_unigram = bigram.unigram[targets]
    p_bigram = np.where(visible, bigram.probability(np.where(visible, left, 0), targets),
                        p_unigram)
    return {"unigram_at_mask": float((targets == unigram).mean()),
            "bigram_at_mask": float((guess == targets).mean()),
            "unigram_loss_at_mask": float(-np.log(p_unigram).mean()),
            # the sampling noise of a mean loss over these targets, for thresholds
            "unigram_loss_se": float(np.log(p_unigram).std(ddof=1) / np.sqrt(len(targets))),
            "bigram_loss_at_mask": float(-np.log(p_bigram).mean()),
            "left_visible": float(visible.mean()), "targets": int(len(targets))}


def reference_levels(eval_config) -> dict:
    """The rungs on ``eval_config``'s held-out MLM set (cached on disk); ``reads_context``:
    two SEs under the unigram's cross-entropy."""
    return _reference_levels(eval_config.vocab_size, eval_config.max_seq_length,
                             eval_config.max_predictions, eval_config.mlm_sequences,
                             CODE_DIGEST)


@functools.lru_cache(maxsize=None)
@cached
def _reference_levels(vocab_size: int, max_seq_length: int, max_predictions: int,
                      mlm_sequences: int, source: str) -> dict:
    """``source``: this module's digest, so that changed rung code misses the cache."""
    from ..engine.evaluate import mlm_set
    tok = Tokenizer(vocab_size=vocab_size)
    data = mlm_set(max_seq_length, max_predictions, mlm_sequences, vocab_size)
    ids, labels = data["input_ids"].numpy(), data["mlm_labels"].numpy()
    rungs = mask_rungs(ids, labels, tokenize_split("train", tok).tokens, tok.vocab_size,
                       tok.mask_id)
    return {"rungs": rungs,
            "reads_context": rungs["unigram_loss_at_mask"] - 2 * rungs["unigram_loss_se"],
            "distance": rungs["unigram_loss_at_mask"] - rungs["bigram_loss_at_mask"]}
