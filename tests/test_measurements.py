"""book.measurements: chapter 6's throughput of the Table 1 models, its ranking against
the paper's Table 2 and the values the page glues, by both stored methods."""
import json

import pandas as pd

from albert_rerun.book import measurements as M
from albert_rerun.profiles import resolve


def test_discordant_pairs_name_the_swapped_pair():
    speed = pd.DataFrame({M.SPEEDUP: [3.55, 3.86, 1.0, 0.3],
                          M.PAPER_SPEEDUP: [5.6, 4.7, 1.0, 0.3]},
                         index=["albert-base", "bert-base", "bert-large", "albert-xxlarge"])
    pairs = M.discordant_pairs(speed)
    assert [(a, b) for a, b, _ in pairs] == [("albert-base", "bert-base")]
    assert abs(pairs[0][2] - 3.55 / 3.86) < 1e-12
    assert M.pairs_phrase(speed) == "albert-base at 0.92x bert-base"
    same = speed.assign(**{M.SPEEDUP: [4.0, 3.86, 1.0, 0.3]})
    assert M.discordant_pairs(same) == [] and M.pairs_phrase(same) == "none"


def test_the_rule_reproduces_only_an_equal_ranking():
    assert M.rule_verdict(1.0) == "reproduced"
    assert M.rule_verdict(0.94) == "not reproduced"


def test_setup_reads_the_machine_and_what_a_step_holds():
    measured = {"threads": 2, "batch": 4, "seq": 64, "steps": 2,
                "provenance": {"machine": {"cpu": "AMD EPYC"}}}
    assert M.setup(measured) == {"machine": "AMD EPYC", "threads": "2", "batch": "4",
                                 "seq": "64", "steps": "2",
                                 "step": "forward and backward pass"}
    assert M.setup({**measured, "step": M.STEP})["step"] == M.STEP


def test_throughput_times_whole_training_steps_and_keeps_the_slowest(results):
    """The measurement times forward, backward and the LAMB update, keeps the slowest
    timed step beside the fastest, and reads a stored first-method measurement beside
    it."""
    measured = M.throughput(resolve("smoke"), "cpu")
    assert measured["step"] == M.STEP
    for row in measured["rows"].values():
        assert row["slowest_step_seconds"] >= row["step_seconds"] > 0
    speed, rho = M.throughput_table(measured)
    assert list(speed.columns) == [M.TOKENS, M.SPEEDUP, M.SPREAD, M.PAPER_SPEEDUP,
                                   "params (M)"]
    assert (speed[M.SPREAD] >= 1).all() and speed.loc["bert-large", M.SPEEDUP] == 1
    assert speed[M.TOKENS].dtype.kind == "i"
    # no first-method measurement stored: both readings are the current one
    _, values = M.throughput_values("smoke", "cpu")
    assert M.earlier(resolve("smoke"), "cpu") is None
    assert values["rho"] == values["first_rho"] == f"{rho:.2f}"
    assert values["ledger"] == values["verdict"] == M.rule_verdict(rho)
    # the first method's measurement (no "step", no slowest step) is read as such
    old = {**measured, "rows": {k: {"step_seconds": v["step_seconds"],
                                    "tokens_per_second": v["tokens_per_second"],
                                    "speedup_vs_bert_large": v["speedup_vs_bert_large"]}
                                for k, v in measured["rows"].items()}}
    del old["step"]
    old["rows"]["albert-base"]["speedup_vs_bert_large"] = 0.01  # last: not the paper's order
    assert M.SPREAD not in M.throughput_table(old)[0]
    store = M.throughput_path(resolve("smoke"), "cpu").parent
    (store / "throughput-0000000000000000.json").write_text(json.dumps(old))
    _, values = M.throughput_values("smoke", "cpu")
    assert values["first_verdict"] == "not reproduced" and values["first_rho"] != "1.00"
    assert "albert-base at 0.0" in values["first_pairs"]
    if values["verdict"] == "reproduced":
        assert values["ledger"].startswith("not reproduced (")  # the first method decides
