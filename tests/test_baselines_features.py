"""The sentence-pair bag of words' inputs (studies.baselines) and the cue bits of the
cue-free baselines (studies.pair_cues), on hand-built pairs."""
import numpy as np

from albert_rerun.studies import baselines as B, pair_cues as PC
from albert_rerun.data.corpus import Instances

CLS, SEP = 2, 3
CAPITALS = list(range(4, 9))  # word-initial pieces with a capital
LOWER = list(range(9, 40))  # lower-case word pieces
PERIOD = 42
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


def test_segment_pieces_reads_back_the_two_segments_in_order():
    pairs, y = opening_cue(5, 0)
    assert B.segment_pieces(pack(pairs, y)) == pairs
    assert B.segment_pieces(pack(pairs, y), rows=[3, 1]) == [pairs[3], pairs[1]]


def test_the_bag_has_a_block_for_each_segment_and_one_for_their_overlap():
    pairs = [([5, 10, 11], [10, 12, 5])]
    x = B.bag_of_words_pairs(pack(pairs, [0]), [0], type("T", (), {
        "vocab_size": V, "cls_id": CLS, "sep_id": SEP})()).toarray()[0]
    assert set(np.flatnonzero(x[:V])) == {5, 10, 11}
    assert set(np.flatnonzero(x[V:2 * V])) == {10, 12, 5}
    assert set(np.flatnonzero(x[2 * V:])) == {5, 10}


def test_starts_capitalised_reads_the_word_mark_and_the_case():
    names = NAMES + ["\u2581", "The", "ring"]
    bare, the, ring = V, V + 1, V + 2
    assert PC.starts_capitalised([4, 10], names)
    assert not PC.starts_capitalised([10, 4], names)
    assert PC.starts_capitalised([bare, the], names)  # "▁" then "The"
    assert not PC.starts_capitalised([ring], names)  # inside a word
    assert not PC.starts_capitalised([], names)
    assert PC.piece_word("\u2581However") == "however"


def test_cue_bits_are_the_openings_and_sentence_ends_of_a_and_b():
    pairs = [([4, 10], [10, PERIOD]), ([10, PERIOD], [5, 11])]
    assert PC._capitals(pairs, NAMES).tolist() == [[1, 0, 0], [0, 1, 0]]
    assert PC._sentence_ends(pairs, NAMES).tolist() == [[0, 1, 0], [1, 0, 0]]
    assert PC._lengths(pairs).tolist() == [[2, 2, 0], [2, 2, 0]]
