"""ALBERT's pretraining examples: the tokenized corpus and segment pairs.

Follows the official ``create_pretraining_data.py`` (described in
../shared/reference/albert_facts.md, section 2): documents are packed into chunks of
sentences up to a target length (shorter with probability ``short_seq_prob``), cut at
a random sentence boundary into A and B, and labelled by the objective:

- ``sop``: B follows A; with p 0.5 the two are swapped (label 1).
- ``nsp``: with p 0.5 B comes from another document (label 1), as BERT.
- ``none``: A and B in order, no sentence-pair label (label -1).

Masking is in ``masking`` (numpy, the reference) and ``device_masking`` (torch, on the
training device).
"""
from __future__ import annotations

import hashlib
import io
import logging
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .files import data_dir, load_documents, sentences, verified
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
    from .files import manifest
    parts = [str(CACHE_VERSION), split, manifest()[f"corpus/{split}.jsonl.xz"],
             hashlib.sha256(tokenizer.path.read_bytes()).hexdigest()]
    return hashlib.sha256("|".join(parts).encode()).hexdigest()[:16]


def tokenize_split(split: str, tokenizer: Tokenizer, cache_dir: Path | None = None):
    """Tokenize a corpus split once; later calls read the cache (rebuilt if corrupt).

    The split's file is checked against the manifest on every call, cache or not: a
    corrupt corpus file stops the run even where its token cache exists."""
    verified(f"corpus/{split}.jsonl.xz")
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
    from ..engine.store import atomic_write_bytes
    buffer = io.BytesIO()
    np.savez(buffer, tokens=corpus.tokens, sentence_starts=corpus.sentence_starts,
             document_starts=corpus.document_starts,
             digest=hashlib.sha256(corpus.tokens.tobytes()).hexdigest())
    # a temporary file of this process's own, then one rename: never a half-written cache
    # entry, and processes that tokenize at once (two test workers) never clash
    atomic_write_bytes(path, buffer.getvalue())
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

    Every objective lays out two segments, ``[CLS] A [SEP] B [SEP]``: ``sop`` swaps them
    with p 0.5 (label 1), ``nsp`` replaces B by text of another document with p 0.5
    (label 1), ``none`` keeps them in order with no label (-1), so that a model trained
    without a sentence-pair loss sees the same kind of input as the other two.
    ``sop_random_for_single``: the official SOP builder takes B from another document
    when a chunk holds one sentence (an NSP-style negative). Off by default: we split
    that sentence at a random token instead, so SOP data hold no topic cue.
    ``limit``: stop after that many instances (held-out and probe sets).
    """
    if objective not in OBJECTIVES:
        raise ValueError(f"objective must be one of {OBJECTIVES}, got {objective!r}")
    rng = np.random.default_rng(seed)
    max_tokens = max_seq_length - 3
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
                a_end = int(rng.integers(1, len(chunk))) if len(chunk) >= 2 else 1
                a = np.concatenate(chunk[:a_end]).tolist()
                b = np.concatenate(chunk[a_end:]).tolist() if a_end < len(chunk) else []
                label = -1 if objective == "none" else 0
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
        ids = [cls] + a + [sep] + b + [sep]
        input_ids[k, :len(ids)] = ids
        token_types[k, len(a) + 2:len(ids)] = 1
        lengths[k] = len(ids)
        labels[k] = label
    return Instances(input_ids, token_types, lengths, labels)
