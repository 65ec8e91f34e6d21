"""Sentence-pair evaluation sets without the segment-cut cue.

The common held-out SOP and NSP pairs (``engine.evaluate.pair_set``, built by
``corpus.create_instances`` as the official builder does) cut about a third of the pairs
inside a sentence, at a random token or by trimming the longer segment; where a segment
starts or ends (a capital, a final full stop) then tells the order. Here every segment is
one or more WHOLE consecutive sentences of one document: it begins at a sentence start
and ends at a sentence end, and nothing is truncated. So a segment's edges look alike
whatever the label.

- ``sop``: B is the sentences directly after A in the same document; label 1 (about
  half, from a seeded draw): the two are swapped.
- ``nsp``: label 0: B directly follows A; label 1: B is whole sentences, from a sentence
  start, of another document of the same part.

Both segments fit ``max_seq_length - 3`` pieces together (``[CLS] A [SEP] B [SEP]``). At
each position of a document a passage of whole sentences is taken up to that budget and
cut at the sentence boundary nearest to a random split of its pieces (``build_pairs``),
so segment lengths vary and A's and B's length distributions are the same: the order
cannot be read from the lengths. A random B has the length of the B it replaces, as
near as the pool allows (a length baseline scores the majority on both tasks). Pairs
do not overlap within a document.

The documents of the split (``validation``) are divided once, by a seeded permutation,
into two disjoint halves: part ``train`` (the probes' training pairs) and part ``test``
(the pairs they are scored on), so that no sentence is in both; a random B of an NSP
pair comes from its own part.
"""
from __future__ import annotations

from functools import lru_cache

import numpy as np

from .corpus import tokenize_split
from .tokenizer import Tokenizer

CUE_FREE_SEED = 34567
PARTS = ("train", "test")
TASKS = ("sop", "nsp")
POSITIONS = ("a_document", "a_first", "a_stop", "b_document", "b_first", "b_stop")


def document_parts(num_documents: int, seed: int = CUE_FREE_SEED) -> dict:
    """The two disjoint halves of the split's documents, each sorted: {part: ids}."""
    order = np.random.default_rng(seed).permutation(num_documents)
    half = num_documents // 2
    return {"train": np.sort(order[:half]), "test": np.sort(order[half:])}


def _grow(lengths, first: int, stop: int, target: int) -> tuple:
    """Whole sentences from ``first`` (always taken) while their pieces stay within
    ``target``, up to sentence ``stop`` (exclusive). Returns (stop sentence, pieces)."""
    size, k = int(lengths[first]), first + 1
    while k < stop and size + lengths[k] <= target:
        size += int(lengths[k])
        k += 1
    return k, size


def _cut(lengths, first: int, stop: int, rng) -> int:
    """The sentence at which a passage [first, stop) of two or more sentences is cut
    into A and B: the boundary nearest to a target drawn uniformly over the passage's
    pieces (ties at random). Reversing the passage reverses the chances, so A and B
    have the same length distribution."""
    bounds = np.cumsum(lengths[first:stop])[:-1]  # pieces before each inner boundary
    total = int(lengths[first:stop].sum())
    target = rng.uniform(0, total)
    distance = np.abs(bounds - target)
    nearest = np.flatnonzero(distance == distance.min())
    return first + 1 + int(nearest[int(rng.integers(len(nearest)))])


def build_pairs(corpus, task: str, documents, budget: int, rng,
                short_prob: float = 0.1) -> list:
    """(A's document, A's first sentence, A's stop, B's document, B's first, B's stop,
    label) of every pair of ``documents`` (sentence indices of ``corpus``, stop
    exclusive; segments as presented, after any swap).

    At each position a passage of whole sentences is taken up to the budget (with
    probability ``short_prob`` up to a shorter target, uniform on 2 .. budget, as the
    official builder's short sequences); a passage of one sentence cannot be cut and its
    position is skipped. The passage is cut by ``_cut``. Greedy filling keeps the
    sentence lengths inside a passage exchangeable (their joint chance is a product of
    the single ones times the chance that the next does not fit), so in-order and
    swapped pairs cannot be told apart by the lengths of their segments.

    A label-1 NSP pair keeps its A and takes, for B, the B of another label-1 passage of
    another document (whose own B is left unused), the one nearest in length to the B it
    replaces (ties at random) among those not taken yet that fit beside A; so random Bs
    have the lengths of following ones, and no sentence serves two pairs as far as the
    pool allows (then a taken one is reused; where none fits, the pair keeps its own B
    and label 0)."""
    if task not in TASKS:
        raise ValueError(f"task must be one of {TASKS}, got {task!r}")
    lengths = np.diff(corpus.sentence_starts)
    ds = corpus.document_starts
    passages = []  # (document, first, cut, stop, target, label)
    for d in rng.permutation(np.asarray(documents)):
        d = int(d)
        i, last = int(ds[d]), int(ds[d + 1])
        while i + 1 < last:
            target = budget
            if rng.random() < short_prob:
                target = int(rng.integers(2, budget + 1))
            stop, _ = _grow(lengths, i, last, target)
            if stop - i < 2:  # one sentence alone fills the target: no pair here; the
                i = stop + 1  # sentence after it was read too (see below)
                continue
            passages.append((d, i, _cut(lengths, i, stop, rng), stop, target,
                             int(rng.random() < 0.5)))
            # the sentence at ``stop`` did not fit this passage, so it is longer than
            # most: starting the next passage with it would make first segments longer
            # than second ones (an order cue). It is left out, and so is the sentence
            # after a passage of one: the next passage starts at a sentence whose length
            # nothing has looked at
            i = stop + 1
    if task == "sop":
        return [((d, k, stop, d, i, k, 1) if label else (d, i, k, d, k, stop, 0))
                for d, i, k, stop, _, label in passages]
    starts = np.concatenate([[0], np.cumsum(lengths)])
    pool = [(d, k, stop) for d, i, k, stop, _, label in passages if label]
    pool_documents = np.array([p[0] for p in pool])
    pool_lengths = np.array([starts[p[2]] - starts[p[1]] for p in pool])
    free = np.ones(len(pool), dtype=bool)
    pairs = []
    for d, i, k, stop, target, label in passages:
        if label:
            room = target - int(starts[k] - starts[i])
            own = int(starts[stop] - starts[k])
            fits = (pool_documents != d) & (pool_lengths <= room)
            choice = np.flatnonzero(fits & free)
            choice = choice if len(choice) else np.flatnonzero(fits)
            if len(choice):
                gap = np.abs(pool_lengths[choice] - own)
                nearest = choice[gap == gap.min()]
                pick = int(nearest[int(rng.integers(len(nearest)))])
                free[pick] = False
                pairs.append((d, i, k, *pool[pick], 1))
                continue
        pairs.append((d, i, k, d, k, stop, 0))
    return pairs


def _layout(corpus, pairs: list, max_seq_length: int, tokenizer: Tokenizer) -> dict:
    import torch
    n = len(pairs)
    ids = np.zeros((n, max_seq_length), dtype=np.int64)
    types = np.zeros((n, max_seq_length), dtype=np.int64)
    mask = np.zeros((n, max_seq_length), dtype=np.int64)
    s = corpus.sentence_starts
    for row, (_, a0, a1, _, b0, b1, _) in enumerate(pairs):
        a, b = corpus.tokens[s[a0]:s[a1]], corpus.tokens[s[b0]:s[b1]]
        sequence = np.concatenate([[tokenizer.cls_id], a, [tokenizer.sep_id], b,
                                   [tokenizer.sep_id]])
        ids[row, :len(sequence)] = sequence
        types[row, len(a) + 2:len(sequence)] = 1
        mask[row, :len(sequence)] = 1
    table = np.array(pairs, dtype=np.int64).reshape(n, 7)
    return {"input_ids": torch.from_numpy(ids), "token_type_ids": torch.from_numpy(types),
            "attention_mask": torch.from_numpy(mask), "labels": table[:, 6].copy(),
            "positions": {name: table[:, k].copy() for k, name in enumerate(POSITIONS)}}


@lru_cache(maxsize=8)
def _both_parts(task: str, max_seq_length: int, vocab_size: int, seed: int,
                split: str) -> dict:
    tokenizer = Tokenizer(vocab_size=vocab_size)
    corpus = tokenize_split(split, tokenizer)
    out = {}
    for k, (part, documents) in enumerate(document_parts(corpus.num_documents, seed).items()):
        rng = np.random.default_rng([seed, TASKS.index(task), k])
        pairs = build_pairs(corpus, task, documents, max_seq_length - 3, rng)
        out[part] = _layout(corpus, pairs, max_seq_length, tokenizer)
    return out


def cue_free_pairs(task: str, part: str, max_seq_length: int, vocab_size: int = 8000,
                   seed: int = CUE_FREE_SEED, split: str = "validation") -> dict:
    """The ``task`` (sop or nsp) pairs of ``part`` (train or test) of ``split``, as
    ``engine.evaluate.pair_set`` gives them: ``input_ids``, ``token_type_ids``,
    ``attention_mask`` (torch, N x max_seq_length), ``labels`` (numpy), and beside them
    ``positions``: per pair the document and the sentences [first, stop) of the segment
    presented first (``a_*``) and second (``b_*``), indices of the tokenized split.
    Cached: callers must not modify what it returns."""
    if part not in PARTS:
        raise ValueError(f"part must be one of {PARTS}, got {part!r}")
    if max_seq_length < 5:
        raise ValueError("max_seq_length must leave room for two segments")
    return _both_parts(task, max_seq_length, vocab_size, seed, split)[part]


def cue_free_counts(max_seq_length: int, vocab_size: int = 8000, seed: int = CUE_FREE_SEED,
                    split: str = "validation") -> dict:
    """Pairs and share of label 1 per task and part, and documents per part."""
    corpus = tokenize_split(split, Tokenizer(vocab_size=vocab_size))
    parts = document_parts(corpus.num_documents, seed)
    out = {"documents": {part: len(documents) for part, documents in parts.items()}}
    for task in TASKS:
        for part in PARTS:
            labels = cue_free_pairs(task, part, max_seq_length, vocab_size, seed, split)["labels"]
            out[f"{task}_{part}_pairs"] = int(len(labels))
            out[f"{task}_{part}_label1_share"] = float(labels.mean()) if len(labels) else 0.0
    return out
