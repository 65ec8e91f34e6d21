"""The baselines without a neural network on the cue-free sentence pairs
(``data.cue_free``), with the cue features they test: whether a segment opens with a
capitalised word and whether it holds a sentence end, the traces of where it was cut.
"""
from __future__ import annotations

import numpy as np

from ..data.tokenizer import Tokenizer
from .baselines import _instances, bag_of_words_pairs, segment_pieces, topic_classifier


def piece_word(piece: str) -> str:
    """A piece's text lowercased without SentencePiece's word mark."""
    return piece.lstrip("\u2581").lower()


def starts_capitalised(pieces: list, names) -> bool:
    """Whether a segment's first piece starts a word ("▁", a bare one read with the next)
    and its first letter is upper case."""
    if not pieces:
        return False
    first = names[pieces[0]]
    if first == "\u2581" and len(pieces) > 1:
        first = "\u2581" + names[pieces[1]]
    return first.startswith("\u2581") and first[1:2].isupper()


def _both_ways(a, b) -> np.ndarray:
    """A's and B's bits and their product."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    return np.column_stack([a, b, a * b])  # the four cases of the 2 x 2 table


def _capitals(segments, names) -> np.ndarray:
    return _both_ways([starts_capitalised(x, names) for x, _ in segments],
                      [starts_capitalised(y, names) for _, y in segments])


def _sentence_ends(segments, names) -> np.ndarray:
    ends = {i for i, name in enumerate(names) if piece_word(name) in (".", "?", "!")}
    return _both_ways([bool(ends & set(x)) for x, _ in segments],
                      [bool(ends & set(y)) for _, y in segments])


def _lengths(segments) -> np.ndarray:
    """Pieces of A and of B and their difference: what a pair's layout says alone."""
    a = np.array([len(x) for x, _ in segments], dtype=float)
    b = np.array([len(y) for _, y in segments], dtype=float)
    return np.column_stack([a, b, a - b])


def cue_free_baselines(max_seq_length: int, vocab_size: int = 8000, seed: int | None = None,
                       split: str = "validation") -> dict:
    """Per task, trained on the ``train`` part, scored on ``test`` in ``CueFreeEval``'s
    order: majority label, bag of words, cue bits (A and B open with a capital, hold a
    sentence end) and the segments' lengths."""
    from ..data.cue_free import CUE_FREE_SEED, cue_free_pairs
    from ..engine.finetune import correctness
    seed = CUE_FREE_SEED if seed is None else seed
    tokenizer = Tokenizer(vocab_size=vocab_size)
    names = [tokenizer.sp.id_to_piece(i) for i in range(tokenizer.vocab_size)]
    inputs = {"bag_of_words": lambda data, segments: bag_of_words_pairs(
                  _instances(data), None, tokenizer),
              "cue_bits": lambda data, segments: np.column_stack(
                  [_capitals(segments, names), _sentence_ends(segments, names)]),
              "lengths": lambda data, segments: _lengths(segments)}
    out = {"max_seq_length": max_seq_length, "vocab_size": vocab_size, "seed": seed,
           "split": split}
    for task in ("sop", "nsp"):
        train, test = (cue_free_pairs(task, part, max_seq_length, vocab_size, seed, split)
                       for part in ("train", "test"))
        segments = {part: segment_pieces(_instances(data))
                    for part, data in (("train", train), ("test", test))}
        y_train, y_test = np.asarray(train["labels"]), np.asarray(test["labels"])
        majority = int(np.bincount(y_train, minlength=2).argmax())
        row = {"train_pairs": int(len(y_train)), "test_pairs": int(len(y_test)),
               "train_label1_share": float(y_train.mean()),
               "test_label1_share": float(y_test.mean()),
               "majority_accuracy": float((y_test == majority).mean()),
               "majority_correct": correctness(np.full(len(y_test), majority), y_test)}
        for name, features in inputs.items():
            model = topic_classifier().fit(features(train, segments["train"]), y_train)
            predictions = model.predict(features(test, segments["test"]))
            row[f"{name}_accuracy"] = float((predictions == y_test).mean())
            row[f"{name}_correct"] = correctness(predictions, y_test)
        out[task] = row
    return out
