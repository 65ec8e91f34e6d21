"""ALBERT's pretraining examples: segment pairs and whole-word n-gram masking.

Follows the official ``create_pretraining_data.py`` (described in
../shared/reference/albert_facts.md, section 2): documents are packed into chunks of
sentences up to a target length (shorter with probability ``short_seq_prob``), cut at
a random sentence boundary into A and B, and labelled by the objective:

- ``sop``: B follows A; with p 0.5 the two are swapped (label 1).
- ``nsp``: with p 0.5 B comes from another document (label 1), as BERT.
- ``none``: one contiguous segment, no sentence-pair label (label -1).

Masking picks whole words in n-grams of n <= 3 words, p(n) proportional to 1/n, 15% of
the tokens up to a cap, replaced 80/10/10 by [MASK] / the original / a random token.
"""
from __future__ import annotations

import hashlib
import logging
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np

from .data import data_dir, load_documents, sentences
from .tokenizer import Tokenizer

log = logging.getLogger(__name__)
OBJECTIVES = ("sop", "nsp", "none")
CACHE_VERSION = 1  # bump when the tokenized layout below changes


# -- tokenized corpus, cached ----------------------------------------------------------

@dataclass
class TokenizedCorpus:
    """All sentences of a split as one flat id array with offsets."""

    tokens: np.ndarray  # (total,) int32
    sentence_starts: np.ndarray  # (sentences + 1,) int64 offsets into tokens
    document_starts: np.ndarray  # (documents + 1,) int64 offsets into sentences

    @property
    def num_documents(self) -> int:
        return len(self.document_starts) - 1

    def subset(self, count: int, seed: int = 0) -> "TokenizedCorpus":
        """``count`` documents chosen with a fixed seed (smaller profiles and tests)."""
        if count <= 0 or count >= self.num_documents:
            return self
        chosen = np.sort(np.random.default_rng(seed).permutation(self.num_documents)[:count])
        tokens, sentence_lengths, per_document = [], [], []
        s = self.sentence_starts
        for d in chosen:
            first, last = self.document_starts[d], self.document_starts[d + 1]
            tokens.append(self.tokens[s[first]:s[last]])
            sentence_lengths.append(np.diff(s[first:last + 1]))
            per_document.append(last - first)
        lengths = np.concatenate(sentence_lengths)
        return TokenizedCorpus(np.concatenate(tokens),
                               np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64),
                               np.concatenate([[0], np.cumsum(per_document)]).astype(np.int64))

    def document(self, d: int) -> list:
        first, last = self.document_starts[d], self.document_starts[d + 1]
        s = self.sentence_starts
        return [self.tokens[s[i]:s[i + 1]] for i in range(first, last)]


def _cache_key(split: str, tokenizer: Tokenizer) -> str:
    from .data import manifest
    parts = [str(CACHE_VERSION), split, manifest()[f"corpus/{split}.jsonl.xz"],
             hashlib.sha256(tokenizer.path.read_bytes()).hexdigest()]
    return hashlib.sha256("|".join(parts).encode()).hexdigest()[:16]


def tokenize_split(split: str, tokenizer: Tokenizer, cache_dir: Path | None = None):
    """Tokenize a corpus split once; later calls read the cache (rebuilt if corrupt)."""
    cache_dir = cache_dir or data_dir() / "cache"
    path = cache_dir / f"tokens-{split}-{_cache_key(split, tokenizer)}.npz"
    if path.exists():
        try:
            with np.load(path) as stored:
                corpus = TokenizedCorpus(stored["tokens"], stored["sentence_starts"],
                                         stored["document_starts"])
            digest = hashlib.sha256(corpus.tokens.tobytes()).hexdigest()
            if digest == str(np.load(path)["digest"]):
                return corpus
            log.warning("cache %s fails its checksum: rebuilding it", path)
        except Exception as error:  # a truncated or garbled file: say so and rebuild
            log.warning("cache %s is unreadable (%s): rebuilding it", path, error)
    documents = load_documents(split)
    sentence_lists = [[s for p in doc["paragraphs"] for s in sentences(p)]
                      for doc in documents]
    flat = [s for doc in sentence_lists for s in doc]
    ids = tokenizer.encode(flat)
    keep = [len(x) > 0 for x in ids]
    lengths = np.array([len(x) for x, k in zip(ids, keep) if k], dtype=np.int64)
    tokens = np.fromiter((t for x in ids for t in x), dtype=np.int32, count=int(lengths.sum()))
    per_document, cursor = [], 0
    for doc in sentence_lists:
        per_document.append(sum(keep[cursor:cursor + len(doc)]))
        cursor += len(doc)
    corpus = TokenizedCorpus(tokens, np.concatenate([[0], np.cumsum(lengths)]),
                             np.concatenate([[0], np.cumsum(per_document)]).astype(np.int64))
    cache_dir.mkdir(parents=True, exist_ok=True)
    partial = path.with_suffix(".partial.npz")
    np.savez(partial, tokens=corpus.tokens, sentence_starts=corpus.sentence_starts,
             document_starts=corpus.document_starts,
             digest=hashlib.sha256(corpus.tokens.tobytes()).hexdigest())
    partial.replace(path)  # atomic: never a half-written cache entry
    return corpus


# -- segment pairs ---------------------------------------------------------------------

@dataclass
class Instances:
    """Fixed-length examples: [CLS] A [SEP] B [SEP] padded with 0."""

    input_ids: np.ndarray  # (N, T) int32
    token_type_ids: np.ndarray  # (N, T) int8
    lengths: np.ndarray  # (N,) int32, tokens before padding
    sentence_labels: np.ndarray  # (N,) int64: 0 in order / 1 swapped or random; -1 none

    def __len__(self):
        return len(self.lengths)


def _truncate_pair(a: list, b: list, max_tokens: int, rng) -> None:
    """Trim the longer segment, from the front or the back at random, until they fit."""
    while len(a) + len(b) > max_tokens:
        longer = a if len(a) > len(b) else b
        if rng.random() < 0.5:
            del longer[0]
        else:
            longer.pop()


def _random_segment(corpus, exclude: int, length: int, rng) -> list:
    """Sentences from a random other document, from a random start, up to ``length``."""
    for _ in range(10):
        other = int(rng.integers(corpus.num_documents))
        if other != exclude:
            break
    document = corpus.document(other)
    start = int(rng.integers(len(document)))
    out = []
    for sentence in document[start:]:
        out.extend(sentence.tolist())
        if len(out) >= length:
            break
    return out


def create_instances(corpus: TokenizedCorpus, tokenizer: Tokenizer, objective: str,
                     max_seq_length: int, seed: int, short_seq_prob: float = 0.1,
                     sop_random_for_single: bool = False, limit: int | None = None) -> Instances:
    """One pass over the corpus, as the official builder (dupe_factor 1 per call).

    ``sop_random_for_single``: the official SOP builder takes B from another document
    when a chunk holds one sentence (an NSP-style negative). Off by default: we split
    that sentence at a random token instead, so SOP data hold no topic cue.
    ``limit``: stop after that many instances (held-out and probe sets).
    """
    if objective not in OBJECTIVES:
        raise ValueError(f"objective must be one of {OBJECTIVES}, got {objective!r}")
    rng = np.random.default_rng(seed)
    pair = objective != "none"
    max_tokens = max_seq_length - (3 if pair else 2)
    examples = []
    for d in rng.permutation(corpus.num_documents):
        if limit is not None and len(examples) >= limit:
            break
        document = corpus.document(int(d))
        target = max_tokens
        if rng.random() < short_seq_prob:
            target = int(rng.integers(2, max_tokens + 1))
        chunk, length, i = [], 0, 0
        while i < len(document):
            chunk.append(document[i])
            length += len(document[i])
            if i == len(document) - 1 or length >= target:
                if not pair:
                    tokens = np.concatenate(chunk).tolist()[:max_tokens]
                    examples.append((tokens, None, -1))
                else:
                    a_end = int(rng.integers(1, len(chunk))) if len(chunk) >= 2 else 1
                    a = np.concatenate(chunk[:a_end]).tolist()
                    b = np.concatenate(chunk[a_end:]).tolist() if a_end < len(chunk) else []
                    label = 0
                    random_b = (objective == "nsp" and (not b or rng.random() < 0.5)) or \
                               (objective == "sop" and not b and sop_random_for_single)
                    if random_b:
                        b = _random_segment(corpus, int(d), max(1, target - len(a)), rng)
                        label = 1
                        i -= len(chunk) - a_end  # the unused sentences are packed again
                    else:
                        if not b:  # one long sentence: cut it at a random token
                            cut = int(rng.integers(1, len(a))) if len(a) > 1 else 1
                            a, b = a[:cut], a[cut:]
                        if objective == "sop" and rng.random() < 0.5:
                            a, b, label = b, a, 1
                    _truncate_pair(a, b, max_tokens, rng)
                    if a and b:
                        examples.append((a, b, label))
                chunk, length = [], 0
            i += 1
    examples = examples[:limit] if limit is not None else examples
    n = len(examples)
    input_ids = np.zeros((n, max_seq_length), dtype=np.int32)
    token_types = np.zeros((n, max_seq_length), dtype=np.int8)
    lengths = np.zeros(n, dtype=np.int32)
    labels = np.zeros(n, dtype=np.int64)
    cls, sep = tokenizer.cls_id, tokenizer.sep_id
    for k, (a, b, label) in enumerate(examples):
        ids = [cls] + a + [sep] + (b + [sep] if b is not None else [])
        input_ids[k, :len(ids)] = ids
        if b is not None:
            token_types[k, len(a) + 2:len(ids)] = 1
        lengths[k] = len(ids)
        labels[k] = label
    return Instances(input_ids, token_types, lengths, labels)


# -- whole-word n-gram masking --------------------------------------------------------

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
