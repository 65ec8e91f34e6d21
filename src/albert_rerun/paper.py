"""The paper's published figures, as printed (arXiv 1909.11942v6, ICLR 2020): the
numbers we compare against, each table named by its source; parameters in millions."""
from __future__ import annotations

from dataclasses import dataclass

BERT_BASE_WORDPIECE_VOCAB = 30522  # Devlin et al.
ALBERT_VOCAB = 30000  # footnote 1
# BERT-base's embedding share as commonly quoted (%, V = 30522); Sec. 3.1 argues it in words
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

# Table 2: data-throughput speedup relative to BERT-large, same training configuration.
TABLE2_SPEEDUP = {
    "bert-base": 4.7, "bert-large": 1.0, "albert-base": 5.6, "albert-large": 1.7,
    "albert-xlarge": 0.6, "albert-xxlarge": 0.3,
}

# Table 5 (ALBERT-base): intrinsic accuracies (%) and downstream Avg by training objective.
TABLE5 = {  # objective: (MLM, NSP, SOP, Avg)
    "none": (54.9, 52.4, 53.3, 79.0),
    "nsp": (54.5, 90.5, 52.0, 79.2),
    "sop": (54.0, 78.9, 86.5, 80.1),
}

# Table 6: equal training time; (steps, hours, Avg).
TABLE6 = {"bert-large": (400_000, 34, 87.2), "albert-xxlarge": (125_000, 32, 88.7)}

# Table 8 (ALBERT-xxlarge, about 1M steps): downstream Avg with and without dropout.
TABLE8_AVG = {"with dropout": 90.4, "without dropout": 90.7}

# the pretraining scale of the paper's ablations (Sec. 4.1)
PAPER_BATCH, PAPER_SEQ, PAPER_STEPS = 4096, 512, 125_000


@dataclass(frozen=True)
class ExperimentScale:
    """The scale of the paper's experiment behind a chapter: its source, its models as
    (name, parameters in M, steps), batch and sequence length (Sec. 4.1's unless
    stated). Figure 1's 125k steps are Table 2's, an inference: the figure states none."""

    source: str
    models: tuple  # ((name, parameters in M, steps), ...)
    batch: int = PAPER_BATCH
    seq: int = PAPER_SEQ

    def tokens(self, steps: int) -> float:
        return float(steps) * self.batch * self.seq


EXPERIMENT_SCALE = {
    "asymmetry": ExperimentScale("Table 4 (ALBERT-base shape, E = 128 and 768)",
                                 (("all shared, E = 128", TABLE4_PARAMS[(128, "all")],
                                   PAPER_STEPS),
                                  ("not shared, E = 768", TABLE4_PARAMS[(768, "none")],
                                   PAPER_STEPS))),
    "sop_nsp": ExperimentScale("Table 5 (ALBERT-base)",
                               (("ALBERT-base", TABLE1["albert-base"][4], PAPER_STEPS),)),
    "dropout": ExperimentScale("Table 8 (ALBERT-xxlarge, about 1M steps)",
                               (("ALBERT-xxlarge", TABLE1["albert-xxlarge"][4], 1_000_000),)),
    "wall_clock": ExperimentScale(
        "Table 6 (equal training time: 34 h and 32 h)",
        (("BERT-large", TABLE1["bert-large"][4], TABLE6["bert-large"][0]),
         ("ALBERT-xxlarge", TABLE1["albert-xxlarge"][4], TABLE6["albert-xxlarge"][0]))),
    "transitions": ExperimentScale(
        "Figure 1 (24-layer BERT-large and ALBERT-large; steps inferred from Table 2)",
        (("BERT-large", TABLE1["bert-large"][4], PAPER_STEPS),
         ("ALBERT-large", TABLE1["albert-large"][4], PAPER_STEPS))),
    "embedding_sweep": ExperimentScale("Table 3 (ALBERT-base shape, E = 64 to 768)",
                                       (("all shared, E = 64", TABLE3_PARAMS[("all", 64)],
                                         PAPER_STEPS),
                                        ("not shared, E = 768", TABLE3_PARAMS[("none", 768)],
                                         PAPER_STEPS))),
}
