"""claims.text: the scale sentences and the reads-context count the pages glue."""
import pandas as pd

from albert_rerun.claims import conditions as C
from albert_rerun.claims import text
from albert_rerun.claims.decisions import CE
from albert_rerun.profiles import eval_config


def test_scale_sentences_ignore_a_shorter_equal_flops_budget():
    """The wide model's shorter schedule must not move the scale sentence (it once made
    the wall-clock chapter's checked output flaky)."""
    base = C.base("smoke")
    full = pd.DataFrame({"steps": [20, 20], "tokens": [2e6, 2e6], "seed": [0, 1]})
    short = pd.DataFrame({"steps": [7, 9], "tokens": [7e5, 9e5], "seed": [0, 1]})
    mixed = pd.concat([full, short])
    assert text.scale_gap(mixed, base, "asymmetry") == text.scale_gap(full, base, "asymmetry")
    assert text.scale_short(mixed, base) == text.scale_short(full, base)
    assert "20 steps, 2.0M tokens, 2 seeds" in text.scale_short(full, base)
    one = pd.DataFrame({"steps": [20], "tokens": [5120.0], "seed": [0]})
    assert "20 steps, 5,120 tokens, 1 seed" in text.scale_short(one, base)
    assert "5,120 tokens per run" in text.scale_gap(one, base, "asymmetry")


def test_each_chapter_names_the_scale_of_its_own_paper_experiment():
    """Review: one sentence ('12M to 108M, 125,000 steps') was glued into chapters whose
    experiments are xxlarge at about 1M steps (Table 8), BERT-large at 400k (Table 6) and
    the 24-layer large models (Figure 1)."""
    base = C.base("smoke")
    one = pd.DataFrame({"steps": [20], "tokens": [5120.0], "seed": [0]})
    dropout = text.scale_gap(one, base, "dropout")
    assert "Table 8" in dropout and "1,000,000 steps" in dropout and "235M" in dropout
    wall = text.scale_gap(one, base, "wall_clock")
    assert "BERT-large 334M parameters, 400,000 steps" in wall and "ALBERT-xxlarge" in wall
    figure = text.scale_gap(one, base, "transitions")
    assert "Figure 1" in figure and "ALBERT-large 18M" in figure
    assert "125,000 steps" in text.scale_gap(one, base, "asymmetry")
    assert len({text.scale_gap(one, base, c) for c in
                ("asymmetry", "sop_nsp", "dropout", "wall_clock", "transitions",
                 "embedding_sweep")}) == 6


def test_context_reading_counts_runs_below_the_line():
    from albert_rerun.claims.baselines import reference_levels
    line = reference_levels(eval_config("smoke"))["reads_context"]
    frame = pd.DataFrame({"condition": ["sop", "sop", "nsp"],
                          CE: [line - 0.01, line + 0.01, line - 5]})
    assert "Of these 3 runs, 2 of 3 end below" in text.context_reading(frame, "smoke")
    frame[CE] = line + 5
    assert "none end below" in text.context_reading(frame, "smoke")
    frame[CE] = line - 5
    assert "all end below" in text.context_reading(frame, "smoke")
