"""The two-sided count rung: neighbour counts that fill a gap from both sides, as a masked
language model sees them. ``TwoSidedCounts``, fitted on the training split with no tuned
parameter, predicts the piece ``w`` at a gap from its visible neighbours ``l`` and ``r``:

- both visible: Witten-Bell interpolation of the trigram counts ``c(l, w, r)`` with the
  bigram chain's ``p_chain(w | l, r) ∝ p(w | l) p(r | w)``:
  ``p(w | l, r) = (c(l, w, r) + T(l, r) p_chain) / (c(l, ., r) + T(l, r))``, ``T(l, r)``
  the distinct pieces seen between ``l`` and ``r``;
- only one visible: the left (or right) bigram; neither (masked, or [CLS] and [SEP],
  which the stream never holds): the add-one unigram.
Each case is a normalized distribution (tested), so its cross-entropy compares with a
model's."""
from __future__ import annotations

import functools
import time

import numpy as np
from scipy import sparse

from ..data.corpus import tokenize_split
from ..data.tokenizer import Tokenizer
from ..engine.evaluate import mlm_set
from ..engine import provenance
from ..engine.store import atomic_write_json, read_json, results_dir
from .baselines import LeftBigram, mask_rungs, mask_targets


class TwoSidedCounts:
    """Neighbour counts of a token stream (see the module's docstring)."""

    def __init__(self, train_tokens: np.ndarray, vocab_size: int):
        t = np.asarray(train_tokens, dtype=np.int64)
        if t.ndim != 1 or len(t) < 3:
            raise ValueError("the training stream must be a flat array of 3 or more ids")
        if t.min() < 0 or t.max() >= vocab_size:
            raise ValueError(f"token ids must lie in [0, {vocab_size})")
        V = self.vocab_size = vocab_size
        self.left = LeftBigram(t, V)  # p(w | l)
        self.right = LeftBigram(t[::-1].copy(), V)  # p(w | r): w precedes r
        self.unigram = self.left.unigram
        self.known = np.bincount(t, minlength=V) > 0  # pieces the stream holds
        counts = sparse.coo_matrix((self.left.pair_counts.astype(float),
                                    (self.left.codes // V, self.left.codes % V)),
                                   shape=(V, V))
        self.rows = counts.tocsr()  # c(l, .)
        self.cols = counts.tocsc()  # c(., r)
        self.seen, self.distinct = self.left.left_counts, self.left.followers.astype(float)
        self.denominator = np.maximum(self.seen + self.distinct, 1.0)
        ends = t[:-2] * V + t[2:]
        self.codes, self.counts = np.unique(ends * V + t[1:-1], return_counts=True)
        keys = self.codes // V
        self.keys, starts = np.unique(keys, return_index=True)  # trigrams by (l, r), then w
        self.starts = np.append(starts, len(keys))
        self.between = np.add.reduceat(self.counts, starts).astype(float)  # c(l, ., r)
        self.types = np.diff(self.starts).astype(float)  # T(l, r)

    def _left_rows(self, left: np.ndarray) -> np.ndarray:
        """p(v | l) for every v: one row per entry of ``left``."""
        dense = self.rows[left].toarray() / self.denominator[left, None]
        dense += (self.distinct[left] / self.denominator[left])[:, None] * self.unigram
        unseen = self.seen[left] == 0
        dense[unseen] = self.unigram
        return dense

    def _right_factor(self, right: np.ndarray) -> np.ndarray:
        """p(r | v) for every v: one row per entry of ``right``."""
        dense = self.cols[:, right].toarray().T / self.denominator[None, :]
        dense += self.unigram[right][:, None] * (self.distinct / self.denominator)[None, :]
        unseen = self.seen == 0
        dense[:, unseen] = self.unigram[right][:, None]
        return dense

    def distributions(self, left: np.ndarray, right: np.ndarray) -> np.ndarray:
        """p(. | l, r): one row per (l, r) pair, both neighbours visible."""
        left, right = np.asarray(left, dtype=np.int64), np.asarray(right, dtype=np.int64)
        chain = self._left_rows(left) * self._right_factor(right)
        chain /= chain.sum(axis=1, keepdims=True)
        V = self.vocab_size
        key = left * V + right
        at = np.clip(np.searchsorted(self.keys, key), 0, len(self.keys) - 1)
        for row in np.nonzero(self.keys[at] == key)[0]:
            g = at[row]
            c, T = self.between[g], self.types[g]
            lo, hi = self.starts[g], self.starts[g + 1]
            chain[row] *= T / (c + T)
            chain[row, self.codes[lo:hi] % V] += self.counts[lo:hi] / (c + T)
        return chain

    def score(self, left: np.ndarray, right: np.ndarray, targets: np.ndarray,
              left_visible: np.ndarray, right_visible: np.ndarray,
              chunk: int = 512) -> tuple:
        """(p(target), top guess) at each gap, by the case its visible neighbours make."""
        n = len(targets)
        p, guess = np.empty(n), np.empty(n, dtype=np.int64)
        both = left_visible & right_visible
        only_left = left_visible & ~right_visible
        only_right = right_visible & ~left_visible
        neither = ~(left_visible | right_visible)
        index = np.nonzero(both)[0]
        for start in range(0, len(index), chunk):
            rows = index[start:start + chunk]
            d = self.distributions(left[rows], right[rows])
            p[rows] = d[np.arange(len(rows)), targets[rows]]
            guess[rows] = d.argmax(axis=1)
        for mask, model, context in ((only_left, self.left, left),
                                     (only_right, self.right, right)):
            rows = np.nonzero(mask)[0]
            if len(rows):
                p[rows] = model.probability(context[rows], targets[rows])
                top = model.top_followers()[context[rows]]
                guess[rows] = np.where(top < 0, int(self.unigram.argmax()), top)
        p[neither] = self.unigram[targets[neither]]
        guess[neither] = int(self.unigram.argmax())
        return p, guess


def two_sided_rung(input_ids: np.ndarray, mlm_labels: np.ndarray, train_tokens: np.ndarray,
                   vocab_size: int, mask_id: int) -> dict:
    """Accuracy, cross-entropy (nats) and its SE of ``TwoSidedCounts`` at [MASK], with
    the share of targets in each case."""
    ids, rows, cols, targets = mask_targets(input_ids, mlm_labels, mask_id)
    targets = targets.astype(np.int64)
    model = TwoSidedCounts(train_tokens, vocab_size)
    last = ids.shape[1] - 1
    left = np.where(cols > 0, ids[rows, np.maximum(cols - 1, 0)], mask_id).astype(np.int64)
    right = np.where(cols < last, ids[rows, np.minimum(cols + 1, last)],
                     mask_id).astype(np.int64)
    # a visible neighbour is a piece the training stream holds, and not [MASK]
    left_visible = (cols > 0) & (left != mask_id) & model.known[left]
    right_visible = (cols < last) & (right != mask_id) & model.known[right]
    p, guess = model.score(left, right, targets, left_visible, right_visible)
    losses = -np.log(p)
    return {"two_sided_at_mask": float((guess == targets).mean()),
            "two_sided_loss_at_mask": float(losses.mean()),
            "two_sided_loss_se": float(losses.std(ddof=1) / np.sqrt(len(targets))),
            "both_visible": float((left_visible & right_visible).mean()),
            "only_left_visible": float((left_visible & ~right_visible).mean()),
            "only_right_visible": float((right_visible & ~left_visible).mean()),
            "neither_visible": float((~(left_visible | right_visible)).mean()),
            "targets": int(len(targets))}


STORE = "yardsticks"  # data/results/yardsticks/


def _set_key(eval_config) -> str:
    """The stored rung's name for a held-out set."""
    return (f"two-sided-V{eval_config.vocab_size}-T{eval_config.max_seq_length}"
            f"-P{eval_config.max_predictions}-N{eval_config.mlm_sequences}")


def _scored(eval_config, sequences: int) -> dict:
    """{"one_sided": ``mask_rungs``, "rung": ``two_sided_rung``} on ``sequences`` sequences."""
    tok = Tokenizer(vocab_size=eval_config.vocab_size)
    data = mlm_set(eval_config.max_seq_length, eval_config.max_predictions, sequences,
                   eval_config.vocab_size)
    ids, labels = data["input_ids"].numpy(), data["mlm_labels"].numpy()
    train = tokenize_split("train", tok).tokens
    return {"one_sided": mask_rungs(ids, labels, train, tok.vocab_size, tok.mask_id),
            "rung": two_sided_rung(ids, labels, train, tok.vocab_size, tok.mask_id)}


def compute(eval_config) -> dict:
    """``_scored`` on the whole held-out set, with its seconds and provenance."""
    started = time.perf_counter()
    out = _scored(eval_config, eval_config.mlm_sequences)
    return {**out, "eval_set": _set_key(eval_config),
            "seconds": time.perf_counter() - started, "provenance": provenance.record()}


def stored(eval_config, store=None):
    """The stored two-sided rung of this held-out set, or None before ``store_rung``."""
    return read_json((store or results_dir(STORE)) / f"{_set_key(eval_config)}.json")


def stored_or_fail(eval_config, store=None) -> dict:
    """``stored``, or FileNotFoundError before ``store_rung``."""
    record = stored(eval_config, store)
    if not record:
        raise FileNotFoundError("no count rungs are stored (data/results/yardsticks/)")
    return record


def levels(record: dict) -> dict:
    """{"unigram", "left bigram", "two-sided": held-out nats at [MASK]} of a record."""
    return {"unigram": record["one_sided"]["unigram_loss_at_mask"],
            "left bigram": record["one_sided"]["bigram_loss_at_mask"],
            "two-sided": record["rung"]["two_sided_loss_at_mask"]}


def levels_on(eval_config, sequences: int) -> dict:
    """``levels`` on the first ``sequences`` held-out sequences, computed once a process."""
    if not 0 < sequences <= eval_config.mlm_sequences:
        raise ValueError(f"sequences must lie in 1..{eval_config.mlm_sequences}, "
                         f"got {sequences}")
    return dict(_levels_on(eval_config, sequences))


@functools.lru_cache(maxsize=None)
def _levels_on(eval_config, sequences: int) -> dict:
    return levels(_scored(eval_config, sequences))


def store_rung(eval_config, store=None) -> dict:
    """``compute``, stored."""
    out = compute(eval_config)
    atomic_write_json((store or results_dir(STORE)) / f"{_set_key(eval_config)}.json", out)
    return out


if __name__ == "__main__":  # python -m albert_rerun.studies.count_rungs: store cpu-long's
    from ..profiles import eval_config
    result = store_rung(eval_config("cpu-long"))
    print({k: round(v, 4) for k, v in result["rung"].items()})
