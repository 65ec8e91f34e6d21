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
    assert text.scale_short(mixed, base) == text.scale_short(full, base)
    shown = f"{tokens / 1e6:.2f}M" if tokens >= 1e6 else f"{tokens:,.0f}"
    assert f"{base.max_steps:,} steps, {shown} tokens, 2 seeds" in text.scale_short(full, base)
    one = pd.DataFrame({"steps": [20], "tokens": [5120.0], "seed": [0]})
    assert f"{shown} tokens, 1 seed" in text.scale_short(one, base)


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
