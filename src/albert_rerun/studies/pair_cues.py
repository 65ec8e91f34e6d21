"""The sentence pairs' segment-cut cue: what the bag of words of chapter 4 reads (issue
17), and the baselines without a neural network on the pairs that lack the cue.

The chapter's bag of words (``baselines``) beats the majority by more on SOP pairs than
on NSP pairs, against the topic argument. ``bag_of_words_features`` lists the pieces it
weighs most, ``bag_of_words_variants`` refits it on parts of each segment and on the
overlap alone, and ``segment_starts`` measures, on the corpus itself, which segment of a
pair begins a sentence; ``bag_of_words_findings`` gathers the three for chapter 4.
``pair_locations`` gives the same per held-out pair, in the order of the models'
per-item correctness strings (chapter 4's analysis without the cut cue reads it).
``cue_free_baselines`` scores the same kinds of model on the cue-free pairs
(``data.cue_free``).
"""
from __future__ import annotations

import numpy as np

from ..data.corpus import tokenize_split
from ..data.tokenizer import Tokenizer
from ..profiles import ResolvedProfile, resolve
from .baselines import (TOPIC_TRAIN_PAIRS, _instances, bag_of_words_pairs, held_out_pairs,
                        segment_bags, segment_pieces, topic_classifier, topic_pairs)


def pair_locations(task: str, eval_config):
    """``locate_segments`` of the held-out ``task`` pairs in the validation split they
    are drawn from, one row per pair in ``held_out_pairs``' order (the order of the
    per-item correctness strings), with each pair's ``label`` beside."""
    tokenizer, test = held_out_pairs(task, eval_config)
    where = locate_segments(tokenize_split("validation", tokenizer), segment_pieces(test))
    return where.assign(label=test.sentence_labels)


# -- what the sentence-pair bag of words reads (issue 17) -----------------------------------
#
# The topic argument predicts that the bag of words does better on NSP pairs than on SOP
# pairs; at the cpu profile it beats the majority by more on SOP. The functions below
# refit the chapter's model (topic_classifier on segment_bags) on parts of its input, so
# that each number answers one question about where its accuracy comes from.

LABELS = {"sop": ("in order", "swapped"), "nsp": ("next", "random")}
# Discourse markers that open or link clauses (the explicit connectives of the Penn
# Discourse Treebank that are single words), compared lowercased without the word mark.
CONNECTIVES = frozenset({
    "accordingly", "additionally", "afterwards", "also", "although", "and", "besides",
    "but", "consequently", "finally", "for", "further", "furthermore", "hence",
    "however", "indeed", "instead", "later", "likewise", "meanwhile", "moreover",
    "nevertheless", "nonetheless", "nor", "or", "otherwise", "similarly", "since", "so",
    "still", "then", "thereafter", "therefore", "though", "thus", "whereas", "while",
    "yet"})
# Anaphoric words, which a later sentence uses for what an earlier one introduced.
PRONOUNS = frozenset({
    "he", "she", "it", "they", "him", "her", "them", "his", "hers", "its", "their",
    "theirs", "this", "that", "these", "those", "thou", "thee", "thy", "ye"})


def piece_word(piece: str) -> str:
    """A piece's text lowercased without SentencePiece's word mark, for the lists above."""
    return piece.lstrip("\u2581").lower()


def starts_capitalised(pieces: list, names) -> bool:
    """Whether a segment opens with a capitalised word: its first piece starts a word
    (the mark "▁") and its first letter is upper case. A bare "▁" piece is read with the
    piece after it. This is the lexical trace of a segment that begins a sentence, the
    one thing a bag of pieces can see of where the segment was cut."""
    if not pieces:
        return False
    first = names[pieces[0]]
    if first == "\u2581" and len(pieces) > 1:
        first = "\u2581" + names[pieces[1]]
    return first.startswith("\u2581") and first[1:2].isupper()


def _without(words: frozenset, names):
    drop = {i for i, name in enumerate(names) if piece_word(name) in words}
    return lambda pieces: [p for p in pieces if p not in drop]


def _jaccard(segments) -> np.ndarray:
    return np.array([[len(set(a) & set(b)) / max(1, len(set(a) | set(b)))]
                     for a, b in segments])


def _both_ways(a, b) -> np.ndarray:
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    return np.column_stack([a, b, a * b])  # the four cases of the 2 x 2 table


def _capitals(segments, names) -> np.ndarray:
    return _both_ways([starts_capitalised(x, names) for x, _ in segments],
                      [starts_capitalised(y, names) for _, y in segments])


def _sentence_ends(segments, names) -> np.ndarray:
    ends = {i for i, name in enumerate(names) if piece_word(name) in (".", "?", "!")}
    return _both_ways([bool(ends & set(x)) for x, _ in segments],
                      [bool(ends & set(y)) for _, y in segments])


def bag_of_words_inputs(names, vocab_size: int) -> dict:
    """The inputs each variant gives the chapter's classifier, by name: a function from
    a list of pairs (``segment_pieces``) to a feature matrix. Each removes or keeps one
    thing, so its accuracy beside the whole bag's says what that thing is worth:

    - the whole bag (the chapter's model);
    - only the first piece of each segment, and each segment without its first piece
      (and without its first three): where in a segment the signal sits;
    - without connectives, without pronouns: the discourse-cue hypotheses;
    - only the pieces in both segments, and their share of the union (Jaccard) alone:
      the topic hypothesis, as one number a logistic regression cannot spread thin;
    - whether A and whether B opens with a capitalised word (two bits and their
      product): the sentence-start hypothesis, as the fewest features that state it;
      whether each holds a sentence end (".", "?", "!"), the same for where a sentence
      was cut at its end, alone and beside the capitals.
    """
    V = vocab_size

    def bag(keep=None, overlap=True):
        return lambda segments: segment_bags(segments, V, keep, overlap)

    return {"whole bag (the chapter's)": bag(),
            "first piece of each segment only": bag(lambda s: s[:1]),
            "without the first piece": bag(lambda s: s[1:]),
            "without the first 3 pieces": bag(lambda s: s[3:]),
            "without connectives": bag(_without(CONNECTIVES, names)),
            "without pronouns": bag(_without(PRONOUNS, names)),
            "pieces in both segments only": lambda s: segment_bags(s, V)[:, 2 * V:],
            "overlap share (Jaccard) alone": _jaccard,
            "A, B open with a capital (2 bits)": lambda s: _capitals(s, names),
            "A, B hold a sentence end (2 bits)": lambda s: _sentence_ends(s, names),
            "capitals and sentence ends (4 bits)": lambda s: np.column_stack(
                [_capitals(s, names), _sentence_ends(s, names)])}


def variant_accuracies(train_segments, y_train, test_segments, y_test, names,
                       vocab_size: int) -> dict:
    """Held-out accuracy of the chapter's classifier on each input of
    ``bag_of_words_inputs``, fitted on the training pairs."""
    out = {}
    for name, features in bag_of_words_inputs(names, vocab_size).items():
        model = topic_classifier().fit(features(train_segments), y_train)
        out[name] = float(model.score(features(test_segments), y_test))
    return out


def top_features(model, names, segments, top: int = 10, labels=("0", "1"),
                 rank: str = "standardized"):
    """The ``top`` features of a bag-of-words model fitted on ``segments`` (the training
    pairs), with the segment block each belongs to (A, B, or both), its weight, the
    label it pushes towards, in how many pairs it is on, and in what share of those its
    piece is the first piece of its segment (of A or of B for a piece in both): the
    position the model cannot see, read back from the data.

    ``rank="standardized"`` (the default) orders by |weight| times the feature's standard
    deviation over the training pairs, the usual importance of a logistic regression's
    input: with 24,000 binary features and 8,000 pairs the largest raw weights go to
    pieces on in a dozen pairs, which move few predictions. ``rank="weight"``: by
    |weight| alone. Ties: the lower column."""
    import pandas as pd
    V = len(names)
    weights = np.asarray(model.coef_[0])
    if rank not in ("standardized", "weight"):
        raise ValueError(f"rank is 'standardized' or 'weight', got {rank!r}")
    on = np.asarray(segment_bags(segments, V).mean(0)).ravel()
    spread = np.sqrt(on * (1 - on))
    score = np.abs(weights) * (spread if rank == "standardized" else 1.0)
    order = np.lexsort((np.arange(len(weights)), -score))[:top]
    rows = []
    for column in order:
        block, piece = divmod(int(column), V)
        if block == 0:
            having = [a[0] == piece for a, b in segments if piece in a]
        elif block == 1:
            having = [b[0] == piece for a, b in segments if piece in b]
        else:
            having = [a[0] == piece or b[0] == piece for a, b in segments
                      if piece in a and piece in b]
        w = float(weights[column])
        rows.append({"segment": ("A", "B", "both")[block], "piece": names[piece],
                     "weight": w, "weight x sd": w * float(spread[column]),
                     "favours": labels[int(w > 0)], "pairs": len(having),
                     "first piece %": 100 * float(np.mean(having)) if having else np.nan})
    return pd.DataFrame(rows)


def locate_segments(corpus, segments) -> "pd.DataFrame":
    """Where each pair's segments lie in ``corpus`` (the split they were drawn from),
    found by their pieces: whether A and whether B begins at a sentence start, and
    whether both lie in one sentence (a long sentence cut in two). A segment is found at
    the first place its first four pieces and then all its pieces match; B at the match
    nearest to A (the same passage where the pair is in order). Segments under four
    pieces, or not found, give NaN."""
    import pandas as pd
    V = int(max(corpus.tokens.max(), max((max(a + b, default=0) for a, b in segments),
                                         default=0))) + 1
    t = corpus.tokens.astype(np.int64)
    n = len(t) - 3
    codes = ((t[:n] * V + t[1:n + 1]) * V + t[2:n + 2]) * V + t[3:n + 3]
    order = np.argsort(codes, kind="stable")
    ordered = codes[order]
    starts = corpus.sentence_starts

    def find(segment, near=None):
        if len(segment) < 4:
            return None
        code = ((segment[0] * V + segment[1]) * V + segment[2]) * V + segment[3]
        lo, hi = np.searchsorted(ordered, [code, code + 1])
        found = [int(p) for p in order[lo:hi]
                 if np.array_equal(t[p:p + len(segment)], segment)]
        if not found:
            return None
        return found[0] if near is None else min(found, key=lambda p: abs(p - near))

    def sentence(p):
        return int(np.searchsorted(starts, p, side="right") - 1)

    rows = []
    for a, b in segments:
        pa = find(a)
        pb = find(b, near=pa)
        rows.append({"A starts a sentence": np.nan if pa is None else float(
                         starts[sentence(pa)] == pa),
                     "B starts a sentence": np.nan if pb is None else float(
                         starts[sentence(pb)] == pb),
                     "A, B in one sentence": np.nan if pa is None or pb is None else float(
                         sentence(pa) == sentence(pb))})
    return pd.DataFrame(rows)


def _names(tokenizer) -> list:
    return [tokenizer.sp.id_to_piece(i) for i in range(tokenizer.vocab_size)]


def bag_of_words_features(profile: ResolvedProfile, task: str, top: int = 10, seed: int = 0,
                          rank: str = "standardized"):
    """The ``top`` most heavily weighted features of the chapter's bag of words on
    ``task`` pairs (sop or nsp) at ``profile``, fitted as the chapter fits it (training
    pairs of draw ``seed``), as ``top_features``: segment, piece, weight, weight times
    the feature's sd, the label it favours, pairs with it, and the share where it is its
    segment's first piece."""
    tokenizer, train, _ = topic_pairs(task, profile.evaluation,
                                      TOPIC_TRAIN_PAIRS[profile.name], seed)
    model = topic_classifier().fit(bag_of_words_pairs(train, None, tokenizer),
                                   train.sentence_labels)
    return top_features(model, _names(tokenizer), segment_pieces(train), top, LABELS[task],
                        rank)


def bag_of_words_variants(profile: ResolvedProfile, seeds=None):
    """Held-out accuracy (%) of the chapter's classifier on each input of
    ``bag_of_words_inputs``, for SOP and NSP pairs: mean over the training draws
    ``seeds`` (the profile's seeds, as the chapter's topic table), and its difference
    from the majority label of the held-out pairs, in points."""
    import pandas as pd

    from .conditions import default_seeds
    seeds = list(default_seeds(profile) if seeds is None else seeds)
    columns = {}
    for task in ("sop", "nsp"):
        per_seed = []
        for seed in seeds:
            tokenizer, train, test = topic_pairs(task, profile.evaluation,
                                                 TOPIC_TRAIN_PAIRS[profile.name], seed)
            per_seed.append(variant_accuracies(
                segment_pieces(train), train.sentence_labels, segment_pieces(test),
                test.sentence_labels, _names(tokenizer), tokenizer.vocab_size))
        share = float(test.sentence_labels.mean())
        accuracy = 100 * pd.DataFrame(per_seed).mean()
        columns[f"{task.upper()} %"] = accuracy
        columns[f"{task.upper()} minus majority"] = accuracy - 100 * max(share, 1 - share)
    table = pd.DataFrame(columns)
    table.index.name = f"input (mean of {len(seeds)} training draws)"
    return table


def segment_starts(profile: ResolvedProfile, seed: int = 0):
    """Where the held-out pairs' segments begin, by task and label (``locate_segments``
    on the validation split they come from), in % of the pairs found; and the chapter's
    bag of words (training draw ``seed``), by which of the two segments begins a
    sentence: pairs, share of label 1, accuracy. Two frames: (by label, by start)."""
    import pandas as pd

    by_label, by_start = [], []
    for task in ("sop", "nsp"):
        tokenizer, train, test = topic_pairs(task, profile.evaluation,
                                             TOPIC_TRAIN_PAIRS[profile.name], seed)
        located = pair_locations(task, profile.evaluation)  # per pair, in test's order
        where, y = located.drop(columns="label"), test.sentence_labels
        for label, name in enumerate(LABELS[task]):
            part = where[y == label]
            by_label.append({"task": task.upper(), "label": name, "pairs": int(len(part)),
                             **(100 * part.mean()).round(1).to_dict()})
        model = topic_classifier().fit(bag_of_words_pairs(train, None, tokenizer),
                                       train.sentence_labels)
        correct = model.predict(bag_of_words_pairs(test, None, tokenizer)) == y
        a, b = where["A starts a sentence"], where["B starts a sentence"]
        group = np.select([a.isna() | b.isna(), (a == 1) & (b == 0), (a == 0) & (b == 1),
                           (a == 1) & (b == 1)],
                          ["not found", "A only", "B only", "both"], "neither")
        for name in ("A only", "B only", "both", "neither", "not found"):
            if (group == name).any():
                by_start.append({"task": task.upper(), "begins a sentence": name,
                                 "pairs": int((group == name).sum()),
                                 "% label 1": 100 * float(y[group == name].mean()),
                                 "bag of words %": 100 * float(correct[group == name].mean())})
    return (pd.DataFrame(by_label).set_index(["task", "label"]),
            pd.DataFrame(by_start).set_index(["task", "begins a sentence"]).round(1))


def bag_of_words_findings(profile: str, seeds=None, top: int = 10) -> dict:
    """What chapter 4 shows of the bag of words at ``profile`` (a name: it is the key
    ``decisions.stored_baseline`` keeps the result under), as plain lists and numbers
    (JSON, so ``stored_baseline`` can keep it; ``findings_tables`` makes the frames):
    ``features`` per task (``bag_of_words_features``, draw 0), ``variants``
    (``bag_of_words_variants`` over ``seeds``), ``starts`` and ``by_start``
    (``segment_starts``), and ``text``, the finding in one paragraph with its numbers."""
    profile = resolve(profile)
    variants = bag_of_words_variants(profile, seeds)
    by_label, by_start = segment_starts(profile)
    tables = {"features": {task: bag_of_words_features(profile, task, top)
                           for task in ("sop", "nsp")},
              "variants": variants, "starts": by_label, "by_start": by_start}
    out = {"features": {task: frame.to_dict("records")
                        for task, frame in tables["features"].items()},
           "variants": variants.reset_index().to_dict("records"),
           "starts": by_label.reset_index().to_dict("records"),
           "by_start": by_start.reset_index().to_dict("records")}
    out["text"] = findings_text(tables)
    return out


def findings_tables(findings: dict) -> dict:
    """``bag_of_words_findings``' lists as the DataFrames the chapter prints."""
    import pandas as pd
    variants = pd.DataFrame(findings["variants"])
    name = next(c for c in variants.columns if c.startswith("input"))
    variants = variants.set_index(name)[["SOP %", "SOP minus majority", "NSP %",
                                         "NSP minus majority"]].round(1)
    order = ["segment", "piece", "weight", "weight x sd", "favours", "pairs", "first piece %"]
    # columns by name: a stored JSON has its keys sorted, a fresh result not
    return {"features": {task: pd.DataFrame(rows)[order] for task, rows in
                         findings["features"].items()},
            "variants": variants,
            "starts": pd.DataFrame(findings["starts"]).set_index(["task", "label"]),
            "by_start": pd.DataFrame(findings["by_start"]).set_index(
                ["task", "begins a sentence"])}


# the variants' rows the finding reads, by the short names of its values
ROWS = {"whole": "whole bag (the chapter's)", "first": "first piece of each segment only",
        "rest": "without the first piece", "caps": "A, B open with a capital (2 bits)",
        "caps_ends": "capitals and sentence ends (4 bits)",
        "ends": "A, B hold a sentence end (2 bits)", "both": "pieces in both segments only",
        "connectives": "without connectives", "pronouns": "without pronouns",
        "jaccard": "overlap share (Jaccard) alone"}


def findings_values(tables: dict) -> dict:
    """The finding's numbers, read from ``tables``: for each row of ``ROWS`` and task,
    '<accuracy>% (<gain over majority> points)' (``<row>_sop``, ``<row>_nsp``); where the
    SOP pairs' segments begin (%); the gap between the overlap's NSP gain and the whole
    bag's SOP gain and its standard error; and which conclusions the numbers carry:
    ``starts_cue`` (the first pieces and the capitals carry SOP), ``later_part`` (A begins
    a sentence more often than B in order), ``topical`` (the overlap alone beats the
    whole bag on NSP, above majority), ``gap_clear`` (the gap exceeds twice its SE)."""
    v, s = tables["variants"], tables["starts"]

    def acc(row, task):
        return float(v.loc[ROWS[row], f"{task} %"])

    out = {f"{row}_{task.lower()}": f"{acc(row, task):.1f}% "
           f"({v.loc[ROWS[row], f'{task} minus majority']:+.1f} points)"
           for row in ROWS for task in ("SOP", "NSP")}
    order, swapped = s.loc[("SOP", "in order")], s.loc[("SOP", "swapped")]
    starts_cue = acc("first", "SOP") > acc("rest", "SOP") and acc("caps", "SOP") > acc(
        "jaccard", "SOP")
    gap, se = gain_gap(v, ROWS["jaccard"], ROWS["whole"], test_pairs(tables))
    out.update(order_a=f"{order['A starts a sentence']:.1f}",
               order_b=f"{order['B starts a sentence']:.1f}",
               swapped_a=f"{swapped['A starts a sentence']:.1f}",
               swapped_b=f"{swapped['B starts a sentence']:.1f}",
               one_sentence=f"{s.loc['SOP', 'A, B in one sentence'].mean():.0f}",
               gap=f"{gap:.1f}", gap_signed=f"{gap:+.1f}", se=f"{se:.1f}",
               starts_cue=starts_cue,
               later_part=starts_cue and order["A starts a sentence"]
               > order["B starts a sentence"],
               topical=acc("jaccard", "NSP") >= acc("whole", "NSP")
               and v.loc[ROWS["jaccard"], "NSP minus majority"] > 0,
               gap_clear=gap > 2 * se)
    return out


def findings_text(tables: dict) -> str:
    """The finding for the chapter's prose: the snippets of
    ``book/templates/pair-cues.md`` that ``findings_values`` says its numbers carry,
    filled with them (the smoke book prints the same paragraph from a few hundred
    pairs)."""
    import re

    from ..paths import repo_root
    values = findings_values(tables)
    text = (repo_root() / "book" / "templates" / "pair-cues.md").read_text()
    snippets = dict(re.findall(r"<!-- (\w+) -->\n(.*?)(?:\n\n|\n?\Z)", text, re.S))

    def say(name: str) -> str:
        return re.sub(r"\{\{\s*(\w+)\s*\}\}", lambda m: str(values[m.group(1)]),
                      " ".join(snippets[name].split()))
    chosen = ["opening_cue" if values["starts_cue"] else "opening_flat", "sop", "starts",
              "later_part" if values["later_part"] else None,
              "nsp_topical" if values["topical"] else "nsp_plain",
              ("gap_clear" if values["gap_clear"] else "gap_unclear")
              if values["topical"] else None]
    return " ".join(say(name) for name in chosen if name)


def test_pairs(tables: dict) -> dict:
    """{"SOP": n, "NSP": n}: the held-out test pairs behind ``tables``' accuracies (the
    pairs counted in its "by_start" table, else its "test_pairs")."""
    if "by_start" in tables:
        counts = tables["by_start"]["pairs"].groupby(level="task").sum()
        return {task: int(counts[task]) for task in ("SOP", "NSP")}
    return dict(tables["test_pairs"])


def gain_gap(v, nsp_row: str, sop_row: str, pairs: dict) -> tuple:
    """The gain over majority of ``nsp_row`` on NSP minus that of ``sop_row`` on SOP
    (points), and its binomial standard error (two independent test sets)."""
    def se(row, task):
        p = float(v.loc[row, f"{task} %"]) / 100
        return 100 * (p * (1 - p) / pairs[task]) ** 0.5
    gap = (float(v.loc[nsp_row, "NSP minus majority"])
           - float(v.loc[sop_row, "SOP minus majority"]))
    return gap, (se(nsp_row, "NSP") ** 2 + se(sop_row, "SOP") ** 2) ** 0.5


# -- the pairs without the segment-cut cue (data.cue_free) -------------------------------

def _lengths(segments) -> np.ndarray:
    """Pieces of A and of B and their difference: what a pair's layout says alone."""
    a = np.array([len(x) for x, _ in segments], dtype=float)
    b = np.array([len(y) for _, y in segments], dtype=float)
    return np.column_stack([a, b, a - b])


def cue_free_baselines(max_seq_length: int, vocab_size: int = 8000, seed: int | None = None,
                       split: str = "validation") -> dict:
    """The no-network baselines on the cue-free pairs (``data.cue_free``), per task:
    each trained on the ``train`` part and scored on the ``test`` part, the pairs
    ``engine.evaluate.CueFreeEval`` scores, in its order (so the correctness strings
    line up with ``{task}_cuefree_probe_correct``). Baselines: the training part's
    majority label; the chapter's bag of words (``bag_of_words_pairs`` with
    ``topic_classifier``); the cue bits, whether A and B open with a capital and hold a
    sentence end (4 bits and their products, ``_capitals`` and ``_sentence_ends``), which
    beat the majority on the common held-out pairs; and the segments' lengths."""
    from ..data.cue_free import CUE_FREE_SEED, cue_free_pairs
    from ..engine.finetune import correctness
    seed = CUE_FREE_SEED if seed is None else seed
    tokenizer = Tokenizer(vocab_size=vocab_size)
    names = _names(tokenizer)
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
