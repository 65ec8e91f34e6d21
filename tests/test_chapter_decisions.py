"""Each chapter module's decision function on synthetic runs with a planted answer, and
on a partial profile (only the decisions whose arms are all in the frame)."""
import numpy as np
import pandas as pd
import pytest
from synthetic import runs, strings

from albert_rerun.book import embedding_size, sop_nsp, wall_clock


def test_wall_clock_decides_once_per_budget_the_profile_has():
    names = {"A": "wide ALBERT-style, equal time", "B": "BERT-style",
             "C": "wide ALBERT-style, equal FLOPs"}
    frame = runs({"A": -0.05, "B": 0.0, "C": 0.02}).replace({"condition": names})
    both = {d.key: d for d in wall_clock.wall_clock_decisions(
        frame, [names["A"], names["C"]], {"ce": 0.01})}
    assert both["wall_clock/equal-time"].verdict() == "reproduced"  # the wide model wins
    assert both["wall_clock/equal-flops"].verdict() == "contradicted"
    assert both["wall_clock/equal-time"].arms == (names["A"], "BERT-style")
    # Table 6 is at equal time: its figure stands beside that decision only
    assert both["wall_clock/equal-time"].paper == "+1.5 Avg (equal time)"
    assert both["wall_clock/equal-flops"].paper.startswith("none")
    only_time = wall_clock.wall_clock_decisions(frame, [names["A"]], {"ce": 0.01})
    assert [d.key for d in only_time] == ["wall_clock/equal-time"]


def test_embedding_decisions_are_made_only_where_both_sizes_are_stored():
    names = {"A": "none, E=64", "B": "none, E=32", "C": "all, E=32"}
    frame = runs({"A": -0.04, "B": 0.0, "C": 0.0}).replace({"condition": names})
    out = embedding_size.embedding_decisions(frame, 32, 32, 64, {"ce": 0.01})
    assert [d.key for d in out] == ["embedding/not-shared"]  # "all, E=64" is missing
    assert out[0].verdict() == "reproduced"


def test_sop_nsp_decisions_on_planted_probes_and_a_partial_frame():
    rng = np.random.default_rng(0)
    items, rows = 400, []
    for condition, sop_p, nsp_p in (("sop", 0.8, 0.7), ("nsp", 0.5, 0.7), ("none", 0.5, 0.5)):
        for seed in range(3):
            rows.append({"condition": condition, "seed": seed,
                         "sop_probe_correct": strings(rng, sop_p, items),
                         "nsp_probe_correct": strings(rng, nsp_p, items),
                         "control_sop_probe_correct": strings(rng, 0.5, items)})
    frame = pd.DataFrame(rows)
    topic = pd.DataFrame([{"task": t, "seed": s, "correct": strings(rng, 0.6, items),
                           "majority": 0.5} for t in ("nsp", "sop") for s in range(3)])
    out = {d.key: d for d in sop_nsp.sop_nsp_decisions(frame, topic, {"pairs": 2.0, "chance": 4.0})}
    assert out["sop_nsp/sop-pairs/sop-nsp"].verdict() == "reproduced"
    assert out["sop_nsp/sop-pairs/sop-nsp"].estimate == pytest.approx(30, abs=6)
    assert out["sop_nsp/topic/nsp"].arms == ()  # a check of the pair sets, no model
    partial = sop_nsp.sop_nsp_decisions(frame[frame["condition"] == "sop"], topic,
                                        {"pairs": 2.0, "chance": 4.0})
    assert [d.key for d in partial] == ["sop_nsp/topic/nsp", "sop_nsp/topic/sop"]


def test_the_all_shared_peak_needs_a_sweep_that_reaches_a_small_e():
    assert "embedding/all-shared" in embedding_size.peak_gate((32, 64), 64)  # the cpu sweep
    assert embedding_size.peak_gate((64, 128, 256), 256) == {}  # gpu: E = H/4 is there


def test_asymmetry_costs_table_says_which_rows_are_decisions():
    """The costs table marks the rows that are decisions of the verdict table."""
    from albert_rerun.book import asymmetry
    effects = {"E=32, none": 0.0, "E=32, attention": 0.001, "E=32, ffn": 0.01,
               "E=32, all": 0.03, "E=64, none": -0.02, "E=64, attention": -0.01,
               "E=64, ffn": 0.0, "E=64, all": 0.01}
    frame = pd.concat([runs({"A": v}).assign(condition=k) for k, v in effects.items()])
    decisions = asymmetry.asymmetry_decisions(frame, frame.iloc[0:0], 32, 64, [], {"ce": 0.01, "small": 0.01})
    costs = asymmetry.costs_table(frame, decisions, 32, 64, 0.01)
    assert len(costs) == 6
    decided = costs.index[costs["judged below"] == "yes"].tolist()
    assert decided == [(32, "attention"), (32, "all"), (64, "all")]
    assert costs.loc[(32, "all"), "our cost (nats)"].startswith("+0.030")
    assert costs.loc[(32, "FFN"), "paper's cost (Avg points)"] == 1.4  # a cost: positive
    partial = frame[frame["condition"].isin(["E=32, all", "E=32, none"])]
    assert asymmetry.costs_table(partial, [], 32, 64, 0.01)["judged below"].tolist() == [
        "no"]


def test_paper_side_turns_a_difference_so_that_positive_is_the_papers_direction():
    """One sign on a findings page: a decision whose paper side is negative shows its
    difference and interval negated (and the interval's ends swapped)."""
    row = pd.Series({"estimate": -0.021, "low": -0.044, "high": 0.002, "paper_sign": -1,
                     "unit": "nats"})
    from albert_rerun.book.plain import size
    assert size(row) == "+0.021 [-0.002, +0.044] nats"
    assert size(row.replace({-1: 1})) == "-0.021 [-0.044, +0.002] nats"
