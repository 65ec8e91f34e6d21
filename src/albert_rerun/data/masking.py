"""Whole-word n-gram masking in numpy: the reference implementation.

As the official ``create_pretraining_data.py`` (../shared/reference/albert_facts.md,
section 2) and SpanBERT: whole words in n-grams of n <= 3 words, p(n) proportional to
1/n, 15% of the tokens up to a cap per sequence, replaced 80/10/10 by [MASK] / the
original / a random token; an n-gram never spans a special token such as [SEP].
``device_masking`` draws masks with the same laws in torch, vectorised over a batch.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from .corpus import Instances
from .tokenizer import Tokenizer


NGRAM_PROBABILITIES = np.array([1 / n for n in (1, 2, 3)]) / sum(1 / n for n in (1, 2, 3))


@dataclass(frozen=True)
class MaskingConfig:
    probability: float = 0.15  # share of tokens to predict
    max_predictions: int = 20  # cap per sequence (the official default at T = 512)
    max_ngram: int = 3
    mask_fraction: float = 0.8  # of the chosen tokens: [MASK]
    random_fraction: float = 0.1  # random token; the remaining 0.1 keep the original


def _words(ids: np.ndarray, word_start: np.ndarray, special: np.ndarray) -> list:
    """Token spans [start, end) of whole words; special tokens belong to no word."""
    spans, start = [], None
    for t, token in enumerate(ids):
        if special[token]:
            if start is not None:
                spans.append((start, t))
            start = None
        elif word_start[token] or start is None:
            if start is not None:
                spans.append((start, t))
            start = t
    if start is not None:
        spans.append((start, len(ids)))
    return spans


@lru_cache(maxsize=None)
def _ngram_cdfs(max_ngram: int) -> tuple:
    """For each number of available words a (index a), the normalized cumulative
    probabilities of n = 1..a, computed as numpy's Generator.choice computes them."""
    cdfs = [None]
    for available in range(1, max_ngram + 1):
        p = NGRAM_PROBABILITIES[:available] / NGRAM_PROBABILITIES[:available].sum()
        cdf = p.cumsum()
        cdf /= cdf[-1]
        cdfs.append(cdf)
    return tuple(cdfs)


def draw_ngram(rng, cdfs: tuple, available: int) -> int:
    """n (1..available) with p(n) ~ 1/n: the same draw, from the same single uniform, as
    ``rng.choice(available, p=p)``, without its 20 microseconds of argument checks."""
    return int(cdfs[available].searchsorted(rng.random(), side="right")) + 1


def mask_sequence(ids: np.ndarray, tokenizer_arrays, config: MaskingConfig, rng):
    """Choose whole-word n-grams in one sequence; return (masked ids, labels, info).

    ``ids`` are the tokens before padding. Labels are -100 except at chosen positions.
    ``info["drawn"]``: n as drawn where all n <= max_ngram were possible (follows
    p(n) ~ 1/n exactly); ``info["chosen"]``: n of the n-grams masked, after shortening.
    """
    word_start, special, vocab_size, mask_id = tokenizer_arrays
    words = _words(ids, word_start, special)
    budget = min(config.max_predictions, max(1, round(len(ids) * config.probability)))
    order = rng.permutation(len(words))
    covered = np.zeros(len(ids), dtype=bool)
    chosen, chosen_n, drawn_n = 0, [], []
    cdfs = _ngram_cdfs(config.max_ngram)
    for w in order:
        if chosen >= budget:
            break
        available = 1  # an n-gram is n adjacent words: it never spans [SEP]
        while (available < min(config.max_ngram, len(words) - w)
               and words[w + available][0] == words[w + available - 1][1]):
            available += 1
        n = draw_ngram(rng, cdfs, available)
        if available == config.max_ngram:
            drawn_n.append(n)
        while n >= 1:  # shorten the n-gram until it fits the budget (official rule)
            start, end = words[w][0], words[w + n - 1][1]
            if chosen + (end - start) <= budget:
                break
            n -= 1
        if n == 0 or covered[start:end].any():
            continue
        covered[start:end] = True
        chosen += end - start
        chosen_n.append(n)
    positions = np.flatnonzero(covered)
    labels = np.full(len(ids), -100, dtype=np.int64)
    labels[positions] = ids[positions]
    masked = ids.copy()
    draw = rng.random(len(positions))
    to_mask = positions[draw < config.mask_fraction]
    to_random = positions[(draw >= config.mask_fraction)
                          & (draw < config.mask_fraction + config.random_fraction)]
    masked[to_mask] = mask_id
    masked[to_random] = rng.integers(5, vocab_size, len(to_random))
    return masked, labels, {"drawn": drawn_n, "chosen": chosen_n}


def tokenizer_arrays(tokenizer: Tokenizer):
    return (np.array(tokenizer.word_start, dtype=bool), np.array(tokenizer.special, dtype=bool),
            tokenizer.vocab_size, tokenizer.mask_id)


def mask_batch(instances: Instances, rows: np.ndarray, arrays, config: MaskingConfig, rng):
    """Masked inputs and labels for a batch of instance rows (numpy, (B, T))."""
    ids = instances.input_ids[rows].astype(np.int64)
    labels = np.full_like(ids, -100)
    for k, row in enumerate(rows):
        length = instances.lengths[row]
        masked, row_labels, _ = mask_sequence(ids[k, :length], arrays, config, rng)
        ids[k, :length] = masked
        labels[k, :length] = row_labels
    return ids, labels
