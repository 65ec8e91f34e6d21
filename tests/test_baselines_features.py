"""studies.pair_cues, what the sentence-pair bag of words reads (issue 17): on synthetic
pair sets where one planted cue decides the label (the opening of a segment, a single
piece, or topic overlap), the feature ranking puts that cue first and the refitted
variants find it where it is and nowhere else; segments are located in a hand-built
corpus."""
import numpy as np
import pytest

from albert_rerun.studies import baselines as B, pair_cues as PC
from albert_rerun.data.corpus import Instances, TokenizedCorpus

CLS, SEP = 2, 3
CAPITALS = list(range(4, 9))  # word-initial pieces with a capital
LOWER = list(range(9, 40))  # lower-case word pieces
HOWEVER, HE, PERIOD = 40, 41, 42
NAMES = (["<pad>", "<unk>", "[CLS]", "[SEP]"]
         + ["\u2581" + w for w in ("Alpha", "Beta", "Gamma", "Delta", "Omega")]
         + [f"\u2581w{i}" for i in LOWER] + ["\u2581however", "\u2581he", "."])
V = len(NAMES)


def pack(segments, labels, length: int = 40) -> Instances:
    """[CLS] A [SEP] B [SEP] rows, as corpus.create_instances lays them out."""
    ids = np.zeros((len(segments), length), dtype=np.int32)
    types = np.zeros((len(segments), length), dtype=np.int8)
    lengths = np.zeros(len(segments), dtype=np.int32)
    for k, (a, b) in enumerate(segments):
        row = [CLS] + a + [SEP] + b + [SEP]
        ids[k, :len(row)] = row
        types[k, len(a) + 2:len(row)] = 1
        lengths[k] = len(row)
    return Instances(ids, types, lengths, np.asarray(labels, dtype=np.int64))


def words(rng, pool, low=5, high=10) -> list:
    return rng.choice(pool, rng.integers(low, high)).tolist()


def opening_cue(n, seed):
    """Label 1 (swapped) iff B, not A, opens with a capital; the rest is noise drawn
    from the same pieces for both labels."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    pairs = []
    for label in y:
        cap, low = [int(rng.choice(CAPITALS))], [int(rng.choice(LOWER))]
        pairs.append(((low if label else cap) + words(rng, LOWER),
                      (cap if label else low) + words(rng, LOWER)))
    return pairs, y


def topic_cue(n, seed):
    """Label 1 (random) iff B's words come from the other topic; both segments open
    with a random capital."""
    rng = np.random.default_rng(seed)
    topics = (LOWER[:15], LOWER[15:])
    y = rng.integers(0, 2, n)
    pairs = []
    for label in y:
        t = int(rng.integers(2))
        pairs.append(([int(rng.choice(CAPITALS))] + words(rng, topics[t]),
                      [int(rng.choice(CAPITALS))] + words(rng, topics[t ^ int(label)])))
    return pairs, y


def planted_piece(n, seed):
    """Label 1 iff "however" is somewhere inside B (never at its start, never in A)."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    pairs = []
    for label in y:
        b = words(rng, LOWER)
        if label:
            b.insert(int(rng.integers(1, len(b) + 1)), HOWEVER)
        pairs.append((words(rng, LOWER), b))
    return pairs, y


def ending_cue(n, seed):
    """Label 1 (swapped) iff A, not B, ends with a full stop: the sentence cut at its
    end; both open with lower-case words."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    pairs = []
    for label in y:
        a, b = words(rng, LOWER), words(rng, LOWER)
        (a if label else b).append(PERIOD)
        pairs.append((a, b))
    return pairs, y


def fitted(pairs, y):
    return B.topic_classifier().fit(B.segment_bags(pairs, V), y)


def accuracies(cue):
    train, y_train = cue(600, 0)
    test, y_test = cue(400, 1)
    return PC.variant_accuracies(train, y_train, test, y_test, NAMES, V)


def test_segment_pieces_reads_back_the_two_segments_in_order():
    pairs, y = opening_cue(5, 0)
    assert B.segment_pieces(pack(pairs, y)) == pairs
    assert B.segment_pieces(pack(pairs, y), rows=[3, 1]) == [pairs[3], pairs[1]]


def test_segment_bags_blocks_and_restriction():
    pairs = [([5, 10, 11], [10, 12, 5])]
    x = B.segment_bags(pairs, V).toarray()[0]
    assert set(np.flatnonzero(x[:V])) == {5, 10, 11}
    assert set(np.flatnonzero(x[V:2 * V])) == {10, 12, 5}
    assert set(np.flatnonzero(x[2 * V:])) == {5, 10}
    first = B.segment_bags(pairs, V, keep=lambda s: s[:1]).toarray()[0]
    assert set(np.flatnonzero(first)) == {5, V + 10}  # A opens with 5, B with 10
    assert not B.segment_bags(pairs, V, overlap=False).toarray()[0, 2 * V:].any()
    # the chapter's matrix is the same bag
    chapter = B.bag_of_words_pairs(pack(pairs, [0]), [0], type("T", (), {
        "vocab_size": V, "cls_id": CLS, "sep_id": SEP})()).toarray()
    assert (chapter == B.segment_bags(pairs, V).toarray()).all()


def test_starts_capitalised_reads_the_word_mark_and_the_case():
    names = NAMES + ["\u2581", "The", "ring"]
    bare, the, ring = V, V + 1, V + 2
    assert PC.starts_capitalised([4, 10], names)
    assert not PC.starts_capitalised([10, 4], names)
    assert PC.starts_capitalised([bare, the], names)  # "▁" then "The"
    assert not PC.starts_capitalised([ring], names)  # inside a word
    assert not PC.starts_capitalised([], names)
    assert PC.piece_word("\u2581However") == "however"


def test_the_planted_piece_ranks_first_and_its_removal_costs_the_accuracy():
    pairs, y = planted_piece(600, 0)
    table = PC.top_features(fitted(pairs, y), NAMES, pairs, top=3, labels=("next", "random"))
    assert (table.loc[0, "segment"], table.loc[0, "piece"]) == ("B", "\u2581however")
    assert table.loc[0, "favours"] == "random" and table.loc[0, "weight"] > 0
    assert table.loc[0, "pairs"] == y.sum()
    assert table.loc[0, "first piece %"] == 0.0  # planted inside B, never first
    assert len(table) == 3 and table["weight x sd"].abs().is_monotonic_decreasing
    raw = PC.top_features(fitted(pairs, y), NAMES, pairs, top=3, rank="weight")
    assert raw.loc[0, "piece"] == "\u2581however"
    assert raw["weight"].abs().is_monotonic_decreasing
    with pytest.raises(ValueError, match="rank"):
        PC.top_features(fitted(pairs, y), NAMES, pairs, rank="size")
    acc = accuracies(planted_piece)
    assert acc["whole bag (the chapter's)"] > 0.95
    assert acc["without connectives"] < 0.65  # "however" is a connective
    assert acc["without pronouns"] > 0.95


def test_an_opening_cue_is_found_at_the_opening_and_not_in_the_overlap():
    pairs, y = opening_cue(600, 0)
    table = PC.top_features(fitted(pairs, y), NAMES, pairs, top=4)
    assert (table["first piece %"] > 90).all()  # the opening pieces lead
    assert set(table["piece"]) <= {NAMES[i] for i in CAPITALS + LOWER}
    acc = accuracies(opening_cue)
    assert acc["first piece of each segment only"] > 0.95
    assert acc["A, B open with a capital (2 bits)"] > 0.95
    assert acc["without the first piece"] < 0.65
    assert acc["overlap share (Jaccard) alone"] < 0.65
    assert acc["A, B hold a sentence end (2 bits)"] < 0.65  # no "." in these pairs


def test_a_sentence_end_cue_is_found_by_its_bits_and_not_at_the_opening():
    acc = accuracies(ending_cue)
    assert acc["A, B hold a sentence end (2 bits)"] > 0.95
    assert acc["capitals and sentence ends (4 bits)"] > 0.95
    assert acc["whole bag (the chapter's)"] > 0.95
    assert acc["first piece of each segment only"] < 0.65
    assert acc["A, B open with a capital (2 bits)"] < 0.65


def test_a_topic_cue_is_found_in_the_overlap_and_not_at_the_opening():
    acc = accuracies(topic_cue)
    assert acc["overlap share (Jaccard) alone"] > 0.8  # the shared openers blur it
    assert acc["pieces in both segments only"] > 0.85
    assert acc["first piece of each segment only"] < 0.65
    assert acc["A, B open with a capital (2 bits)"] < 0.65


def hand_corpus() -> TokenizedCorpus:
    """One document of three sentences (ids from 10) and one of one sentence."""
    sentences = [list(range(10, 15)), list(range(15, 21)), list(range(21, 30)),
                 list(range(30, 36))]
    lengths = [len(s) for s in sentences]
    return TokenizedCorpus(np.concatenate(sentences).astype(np.int32),
                           np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64),
                           np.array([0, 3, 4], dtype=np.int64))


def test_locate_segments_tells_sentence_starts_and_cut_sentences():
    s0, s1, s2 = list(range(10, 15)), list(range(15, 21)), list(range(21, 30))
    segments = [(s0, s1),  # two whole sentences in order
                (s1[2:], s2),  # A trimmed at its start
                (s2[:4], s2[4:]),  # one sentence cut in two
                (s2[4:], s2[:4]),  # the same, swapped
                ([10, 11], s1),  # A too short to be located
                ([99, 98, 97, 96], s1)]  # A not in the corpus
    where = PC.locate_segments(hand_corpus(), segments)
    assert where["A starts a sentence"].tolist()[:4] == [1.0, 0.0, 1.0, 0.0]
    assert where["B starts a sentence"].tolist()[:4] == [1.0, 1.0, 0.0, 1.0]
    assert where["A, B in one sentence"].tolist()[:4] == [0.0, 0.0, 1.0, 1.0]
    assert where.iloc[4:]["A starts a sentence"].isna().all()
    assert where.iloc[4:]["A, B in one sentence"].isna().all()
    assert (where.iloc[4:]["B starts a sentence"] == 1.0).all()


def test_findings_draw_a_conclusion_only_where_the_numbers_carry_it():
    import pandas as pd
    rows = list(PC.bag_of_words_inputs(NAMES, V))

    def variants(sop, nsp):
        frame = pd.DataFrame({"SOP %": sop, "NSP %": nsp}, index=rows)
        frame["SOP minus majority"] = frame["SOP %"] - 50
        frame["NSP minus majority"] = frame["NSP %"] - 60
        return frame[["SOP %", "SOP minus majority", "NSP %", "NSP minus majority"]]

    starts = pd.DataFrame({"A starts a sentence": [56.0, 19.0, 45.0, 34.0],
                           "B starts a sentence": [18.0, 55.0, 30.0, 45.0],
                           "A, B in one sentence": [34.0, 31.0, 0.0, 0.0]},
                          index=pd.MultiIndex.from_tuples(
                              [("SOP", "in order"), ("SOP", "swapped"), ("NSP", "next"),
                               ("NSP", "random")], names=["task", "label"]))
    # as measured: the openings carry SOP, the overlap NSP
    cue = variants([59, 65, 58, 55, 59, 58, 50, 49, 68, 53, 69],
                   [67, 58, 67, 65, 66, 66, 70, 70, 60, 60, 60])
    pairs = {"SOP": 1024, "NSP": 1024}
    values = PC.findings_values({"variants": cue, "starts": starts, "test_pairs": pairs})
    assert values["starts_cue"] and values["later_part"] and values["topical"]
    assert values["first_sop"] == "65.0% (+15.0 points)"
    assert values["jaccard_nsp"] == "70.0% (+10.0 points)"
    assert (values["order_a"], values["swapped_b"], values["one_sentence"]) == (
        "56.0", "55.0", "32")
    # overlap's NSP gain +10.0 against the bag's SOP gain +9.0: 1 point, an untested gap
    assert not values["gap_clear"] and values["gap_signed"] == "+1.0"
    text = PC.findings_text({"variants": cue, "starts": starts, "test_pairs": pairs})
    assert "65.0% (+15.0 points)" in text and "{{" not in text
    wide_gap = cue.copy()
    wide_gap.loc["overlap share (Jaccard) alone", ["NSP %", "NSP minus majority"]] = [80, 20]
    assert PC.findings_values({"variants": wide_gap, "starts": starts,
                               "test_pairs": pairs})["gap_clear"]
    gap, se = PC.gain_gap(wide_gap, "overlap share (Jaccard) alone",
                          "whole bag (the chapter's)", pairs)
    assert gap == pytest.approx(11.0) and se == pytest.approx(
        100 * ((0.8 * 0.2 + 0.59 * 0.41) / 1024) ** 0.5)
    # the other way round: no claim the numbers do not make
    flat = variants([61, 50, 62, 60, 61, 60, 62, 62, 50, 50, 50],
                    [67, 58, 67, 65, 66, 66, 62, 62, 60, 60, 60])
    values = PC.findings_values({"variants": flat, "starts": starts, "test_pairs": pairs})
    assert not values["starts_cue"] and not values["later_part"] and not values["topical"]


@pytest.mark.slow
def test_findings_at_the_smoke_profile_are_json_and_make_the_chapter_tables():
    """The wiring on the real corpus: the chapter's pairs at smoke, one training draw."""
    import json
    findings = PC.bag_of_words_findings("smoke", seeds=[0], top=4)
    json.dumps(findings)  # stored_baseline keeps it as JSON
    tables = PC.findings_tables(findings)
    assert list(tables["variants"].index) == list(PC.bag_of_words_inputs(NAMES, V))
    assert set(tables["features"]) == {"sop", "nsp"}
    assert len(tables["features"]["sop"]) == 4
    assert set(tables["features"]["sop"]["favours"]) <= {"in order", "swapped"}
    assert set(tables["starts"].index.get_level_values("task")) == {"SOP", "NSP"}
    # the whole bag refitted here is the chapter's topic baseline
    from albert_rerun.profiles import eval_config
    chapter = B.topic_baseline("sop", eval_config("smoke"), B.TOPIC_TRAIN_PAIRS["smoke"], 0)
    assert tables["variants"].loc["whole bag (the chapter's)", "SOP %"] == pytest.approx(
        100 * chapter["accuracy"], abs=0.05)  # the page's table is rounded to 0.1 point
    assert findings["text"] == PC.findings_text(tables)
