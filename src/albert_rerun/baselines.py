"""A topic-only baseline for the sentence-pair tasks (claim 4, SOP vs NSP).

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
