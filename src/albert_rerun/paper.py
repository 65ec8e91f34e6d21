"""The paper's published figures, as printed (arXiv 1909.11942v6, ICLR 2020).

These are the numbers we compare against, not results of ours: each table names
its source. Parameter counts are in millions as the paper rounds them.
"""
from __future__ import annotations

SOURCE = "Lan et al. (2020), arXiv:1909.11942v6"

# Sec. 3.1 / Devlin et al.: BERT-base's embedding share, quoted in the intro of
# many ALBERT explanations; the 21.8% is computed for V = 30522 (WordPiece).
BERT_BASE_WORDPIECE_VOCAB = 30522
ALBERT_VOCAB = 30000  # footnote 1
# The embedding share of BERT-base as commonly quoted (%, one decimal); the paper's
# Sec. 3.1 argues it qualitatively ("the embedding matrix ... billions of parameters").
BERT_BASE_EMBEDDING_SHARE = 21.8

# Table 1: (layers, hidden, embedding, sharing, parameters in M)
TABLE1 = {
    "bert-base": (12, 768, 768, False, 108),
    "bert-large": (24, 1024, 1024, False, 334),
    "albert-base": (12, 768, 128, True, 12),
    "albert-large": (24, 1024, 128, True, 18),
    "albert-xlarge": (24, 2048, 128, True, 60),
    "albert-xxlarge": (12, 4096, 128, True, 235),
}

# Table 3 (ALBERT-base shape): parameters in M by (sharing, E), and the Avg score.
TABLE3_PARAMS = {
    ("none", 64): 87, ("none", 128): 89, ("none", 256): 93, ("none", 768): 108,
    ("all", 64): 10, ("all", 128): 12, ("all", 256): 16, ("all", 768): 31,
}
TABLE3_AVG = {
    ("none", 64): 81.3, ("none", 128): 81.7, ("none", 256): 81.8, ("none", 768): 82.3,
    ("all", 64): 79.0, ("all", 128): 80.1, ("all", 256): 79.6, ("all", 768): 79.8,
}

# Table 4 (ALBERT-base shape): parameters in M and Avg by (E, sharing scheme).
TABLE4_PARAMS = {
    (768, "all"): 31, (768, "attention"): 83, (768, "ffn"): 57, (768, "none"): 108,
    (128, "all"): 12, (128, "attention"): 64, (128, "ffn"): 38, (128, "none"): 89,
}
TABLE4_AVG = {
    (768, "all"): 79.8, (768, "attention"): 81.6, (768, "ffn"): 79.5, (768, "none"): 82.3,
    (128, "all"): 80.1, (128, "attention"): 81.7, (128, "ffn"): 80.2, (128, "none"): 81.6,
}
