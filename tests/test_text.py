"""claims.text: the scale sentences and the reads-context count the pages glue."""
import pytest
import pandas as pd

from albert_rerun.studies import conditions as C
from albert_rerun.book import text
from albert_rerun.studies.decisions import CE
from albert_rerun.profiles import resolve


def test_scale_sentences_count_tokens_as_the_paper_does_from_the_config():
    """One count of a run's tokens everywhere (steps x batch x length, as the paper's
    262B): the chapters said 5.3M (tokens seen) where the introduction said 5.53M, and
    a shorter equal-FLOPs budget among the runs must not move the sentence (it once
    made the wall-clock chapter's checked output flaky)."""
    base = C.base("smoke")
    tokens = base.max_steps * base.batch_size * base.max_seq_length
    assert text.tokens_per_run(base) == tokens
    full = pd.DataFrame({"steps": [20, 20], "tokens": [2e6, 2e6], "seed": [0, 1]})
    short = pd.DataFrame({"steps": [7, 9], "tokens": [7e5, 9e5], "seed": [0, 1]})
    mixed = pd.concat([full, short])
    assert text.scale_gap(mixed, base, "asymmetry") == text.scale_gap(full, base, "asymmetry")
    assert text.scale_short(mixed, base) == text.scale_short(full, base)
    shown = text._tokens_text(tokens)
    assert f"{base.max_steps:,} steps, {shown} tokens, 2 seeds" in text.scale_short(full, base)
    one = pd.DataFrame({"steps": [20], "tokens": [5120.0], "seed": [0]})
    assert f"{shown} tokens, 1 seed" in text.scale_short(one, base)
    assert f"{shown} tokens per run" in text.scale_gap(one, base, "asymmetry")
    # the paper's tokens over ours, rounded as the introduction rounds it
    ratio = 125_000 * 4096 * 512 / tokens
    assert f"(262B tokens, {text.times(ratio)} ours)" in text.scale_gap(one, base,
                                                                        "asymmetry")


def test_each_chapter_names_the_scale_of_its_own_paper_experiment():
    """Review: one sentence ('12M to 108M, 125,000 steps') was glued into chapters whose
    experiments are xxlarge at about 1M steps (Table 8), BERT-large at 400k (Table 6) and
    the 24-layer large models (Figure 1)."""
    base = C.base("smoke")
    one = pd.DataFrame({"steps": [20], "tokens": [5120.0], "seed": [0]})
    dropout = text.scale_gap(one, base, "dropout")
    assert "Table 8" in dropout and "1,000,000 steps" in dropout and "235M" in dropout
    wall = text.scale_gap(one, base, "wall_clock")
    assert "BERT-large: 334M parameters, 400,000 steps" in wall and "ALBERT-xxlarge" in wall
    figure = text.scale_gap(one, base, "transitions")
    assert "Figure 1" in figure and "ALBERT-large: 18M" in figure
    assert "125,000 steps" in text.scale_gap(one, base, "asymmetry")
    assert len({text.scale_gap(one, base, c) for c in
                ("asymmetry", "sop_nsp", "dropout", "wall_clock", "transitions",
                 "embedding_sweep")}) == 6


def test_scale_gap_names_each_arm_of_a_claim_whose_arms_differ():
    """Review: chapter 6's scale gap gave the BERT-style arm's size and steps only; the
    wide arm is twice as wide and makes fewer steps."""
    bert = C.bert_style(resolve("smoke"))
    wide = C.wide_albert(resolve("smoke"), 7, 5e-3)
    frame = pd.DataFrame({"condition": ["B", "B", "W", "W"], "steps": [20, 20, 7, 7],
                          "tokens": [2e6, 2e6, 7e5, 7e5], "seed": [0, 1, 0, 1]})
    gap = text.scale_gap(frame, bert, "wall_clock",
                         arms={"BERT-style": (bert, "B"), "wide": (wide, "W")})
    bert_m = text.parameter_count(bert) / 1e6
    wide_m = text.parameter_count(wide) / 1e6
    b_tokens, w_tokens = text.tokens_per_run(bert), text.tokens_per_run(wide)
    assert w_tokens < b_tokens
    assert (f"BERT-style: {bert_m:.2f}M parameters, {bert.max_steps:,} steps, "
            f"{text._tokens_text(b_tokens)} tokens") in gap
    assert f"Wide: {wide_m:.2f}M parameters, 7 steps, {text._tokens_text(w_tokens)} tokens" in gap
    assert "2 seeds" in gap
    # each paper model against the arm in its place: BERT-large against BERT-style,
    # ALBERT-xxlarge against the wide arm
    theirs = text.paper.EXPERIMENT_SCALE["wall_clock"]
    assert (f"BERT-large: 334M parameters, 400,000 steps (839B tokens, "
            f"{text.times(theirs.tokens(400_000) / b_tokens)} ours of the BERT-style "
            f"arm)") in gap
    assert (f"(262B tokens, {text.times(theirs.tokens(125_000) / w_tokens)} ours of the "
            f"wide arm)") in gap


def test_the_metrics_table_keeps_to_the_accuracy_at_mask():
    """Issue #26 (slim tables): the accuracy over every predicted position left the main
    table (it stays in the runs); the cross-entropy and accuracy at [MASK] remain, with
    their units, and extra columns follow them."""
    frame = pd.DataFrame({"condition": ["a", "a", "b", "b"], "seed": [0, 1, 0, 1],
                          CE: [6.5, 6.6, 6.4, 6.45], "mlm_accuracy_at_mask": [0.05] * 4,
                          "mlm_accuracy": [0.13] * 4})
    table = text.metrics_table(frame, {"params (M)": pd.Series({"a": 1.0, "b": 2.0})})
    assert list(table.columns) == ["CE at [MASK] (nats)", "MLM acc. at [MASK] %",
                                   "params (M)"]
    assert table.index.name == "condition"
    assert table.loc["a", "MLM acc. at [MASK] %"].startswith("5.0 [")


def test_machines_text_says_which_conditions_ran_where():
    """Review: cpu-long's pairs were split across CPU types without a word."""
    frame = pd.DataFrame({"condition": ["a", "a", "b", "c"],
                          "machine": ["Intel", "Intel", "AMD", "Intel"]})
    assert "2 kinds of machine (Intel: a, c; AMD: b)" in text.machines_text(frame)
    assert text.machines_text(frame.assign(machine="AMD")) == ""
