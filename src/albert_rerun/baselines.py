"""Baselines that need no neural network.

Rungs for masked-token prediction (the recipe chapter): the most frequent training piece,
and the piece that most often follows the visible left neighbour in the training split.
A model below the first rung has learned nothing; one above the second reads more
context than one neighbour. The same two models as probabilities (add-one unigram,
Witten-Bell interpolated left bigram) give cross-entropy rungs, which move before the
top guess does.

A topic-only baseline for the sentence-pair tasks (claim 4, SOP vs NSP).

The paper argues that NSP can be solved by topic: a random second segment usually
comes from another document, so word overlap gives it away, while SOP's two segments
always share a topic. The paper does not measure this. Here a logistic regression
(scikit-learn) sees only bags of words: which pieces occur in segment A, which in B,
and which in both; no order within a segment. If it solves NSP and not SOP, NSP is
solvable by topic overlap.
"""
from __future__ import annotations

import numpy as np
from scipy import sparse

from .pretraining_data import create_instances, tokenize_split
from .tokenizer import Tokenizer


def bag_of_words_pairs(instances, rows, tokenizer: Tokenizer) -> sparse.csr_matrix:
    """[A's pieces | B's pieces | pieces in both] as binary indicators, one row per pair."""
    V = tokenizer.vocab_size
    special = {tokenizer.cls_id, tokenizer.sep_id}
    data_rows, columns = [], []
    for k, r in enumerate(rows):
        n = int(instances.lengths[r])
        ids, types = instances.input_ids[r, :n], instances.token_type_ids[r, :n]
        a = set(ids[types == 0].tolist()) - special
        b = set(ids[types == 1].tolist()) - special
        for offset, words in ((0, a), (V, b), (2 * V, a & b)):
            columns += [offset + w for w in words]
            data_rows += [k] * len(words)
    values = np.ones(len(columns), dtype=np.float32)
    return sparse.csr_matrix((values, (data_rows, columns)), shape=(len(rows), 3 * V))


def topic_baseline(task: str, max_seq_length: int, train_pairs: int, test_pairs: int,
                   tokenizer: Tokenizer | None = None, seed: int = 0) -> dict:
    """Held-out accuracy of the bag-of-words classifier on ``task`` (sop or nsp) pairs,
    trained on pairs from the training split, tested on the validation split (the same
    held-out pairs the pretrained models are evaluated on: same builder, same seed)."""
    from sklearn.linear_model import LogisticRegression

    tokenizer = tokenizer or Tokenizer()
    train = create_instances(tokenize_split("train", tokenizer), tokenizer, task,
                             max_seq_length, seed=999 + seed, limit=train_pairs)
    test = create_instances(tokenize_split("validation", tokenizer), tokenizer, task,
                            max_seq_length, seed=12345, limit=test_pairs)
    train_rows = np.arange(min(train_pairs, len(train.lengths)))
    test_rows = np.arange(min(test_pairs, len(test.lengths)))
    x_train = bag_of_words_pairs(train, train_rows, tokenizer)
    x_test = bag_of_words_pairs(test, test_rows, tokenizer)
    y_train, y_test = train.sentence_labels[train_rows], test.sentence_labels[test_rows]
    model = LogisticRegression(max_iter=2000, C=1.0).fit(x_train, y_train)
    share = float(y_test.mean())
    return {"task": task, "accuracy": float(model.score(x_test, y_test)),
            "majority": max(share, 1 - share), "train_pairs": len(train_rows),
            "test_pairs": len(test_rows)}


def left_bigram_table(train_tokens: np.ndarray, vocab_size: int) -> np.ndarray:
    """For every piece, the piece that most often follows it in ``train_tokens``
    (ties: the smaller id); -1 for a piece never followed by anything."""
    return LeftBigram(train_tokens, vocab_size).top_followers()


class LeftBigram:
    """Left-bigram counts of a token stream, and their probabilities interpolated with an
    add-one unigram by Witten-Bell (no tuned parameter):
    p(y | l) = (c(l, y) + T(l) p(y)) / (c(l) + T(l)), where c(l) counts the pieces
    following l and T(l) the distinct ones; a piece never seen on the left gets p(y)."""

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


def mask_rungs(input_ids: np.ndarray, mlm_labels: np.ndarray, train_tokens: np.ndarray,
               vocab_size: int, mask_id: int) -> dict:
    """Accuracy and cross-entropy (nats) at the positions shown as [MASK] of two
    count-based predictors fitted on the training split: the unigram (its top guess is
    the most frequent piece), and the left bigram (its top guess the most frequent
    follower of the left neighbour) where that neighbour is visible, else the unigram."""
    ids, labels = np.asarray(input_ids), np.asarray(mlm_labels)
    if ids.shape != labels.shape:
        raise ValueError(f"input_ids {ids.shape} and mlm_labels {labels.shape} differ")
    at_mask = (labels != -100) & (ids == mask_id)
    if not at_mask.any():
        raise ValueError("no position is shown as [MASK]")
    bigram = LeftBigram(train_tokens, vocab_size)  # one pass over the training counts
    unigram = int(bigram.unigram.argmax())  # add-one keeps the most frequent piece first
    follower = bigram.top_followers()
    rows, cols = np.nonzero(at_mask)
    targets = labels[rows, cols]
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


_LEVELS: dict = {}


def reference_levels(config) -> dict:
    """What a model scores at [MASK] without reading context, on the held-out MLM set a
    run with ``config`` is scored on (its vocabulary, objective, length and size; the
    rungs are fitted on the training split). ``reads_context`` is the cross-entropy a
    run must end below to read context: two standard errors under the unigram's.

    Computed once per held-out set in a process (the rungs fit the training split's
    bigram counts); callers must not modify the returned arrays."""
    key = (config.vocab_size, config.objective, config.max_seq_length,
           config.max_predictions, config.eval_examples)  # all that HeldOut's set depends on
    if key not in _LEVELS:
        _LEVELS[key] = _reference_levels(config)
    return _LEVELS[key]


def _reference_levels(config) -> dict:
    from .train import HeldOut  # train imports the data modules this one does

    tok = Tokenizer(vocab_size=config.vocab_size)
    sets = HeldOut(config, tok, tokenize_split("validation", tok)).sets[config.objective]
    ids, labels = sets["input_ids"].numpy(), sets["mlm_labels"].numpy()
    selected = labels != -100
    targets, shown = labels[selected], ids[selected]
    at_mask = shown == tok.mask_id
    top = np.bincount(targets[at_mask]).argmax()
    rungs = mask_rungs(ids, labels, tokenize_split("train", tok).tokens, tok.vocab_size,
                       tok.mask_id)
    return {"tokenizer": tok, "targets": targets, "at_mask": at_mask, "top": top,
            "plateau": float(((shown == targets) | (at_mask & (targets == top))).mean()),
            "unigram": float((targets == top).mean()),  # the most frequent piece everywhere
            "rungs": rungs,
            "reads_context": rungs["unigram_loss_at_mask"] - 2 * rungs["unigram_loss_se"]}
