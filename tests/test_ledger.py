"""The ledger's families (Holm over a profile's decisions, a profile still training
padded to its plan), its table and CSV, on synthetic families."""

import pandas as pd
import pytest

from albert_rerun.book import ledger
from albert_rerun.stats.inference import arm_level, decision, holm

RUNGS = {"rungs": {"unigram_loss_at_mask": 6.685, "bigram_loss_at_mask": 6.147},
         "reads_context": 6.665, "distance": 6.685 - 6.147}


def _d(key, p, ces):
    numbers = {"estimate": 0.1, "low": 0.05, "high": 0.15, "n": 3, "p_difference": p,
               "p_equivalence": 0.9}
    return decision(key, "asymmetry", key, numbers, 0.02, +1, "nats", "t").with_gate(
        [arm_level(f"arm{i}", ce, RUNGS) for i, ce in enumerate(ces)])


def test_readings_are_counted_with_gated_ones_apart():
    family = holm([_d("early", 0.001, [6.5, 6.4]), _d("past", 0.001, [6.0, 6.1]),
                   _d("collapsed", 0.001, [6.5, 6.685])])
    assert ledger.reading_counts(family).to_dict() == {"holds here": 2,
                                                       "not testable here": 1}
    assert ledger.reading_summary(family) == "2 holds here, 1 not testable here"


def test_book_decisions_are_computed_once_per_state_of_the_store(monkeypatch, results):
    """A chapter asks for the same profiles' decisions several times; the second call at
    the same store state reuses the first, and a file written to the store (a run that
    finished meanwhile) makes the next call compute again."""
    calls = []

    def compute(profile, seeds, device, train_missing):
        calls.append(profile.name)  # resolved once, by book_decisions
        return [_d(f"{profile.name}-{len(calls)}", 0.01, [6.5, 6.4])]
    monkeypatch.setattr(ledger, "_book_decisions", compute)
    ledger._cached.cache_clear()
    first = ledger.book_decisions("cpu")
    assert ledger.book_decisions("cpu") == first and calls == ["cpu"]
    ledger.book_decisions("cpu", seeds=range(2))  # other arguments: computed
    assert calls == ["cpu", "cpu"]
    store = results / "cpu" / "pretrain"
    store.mkdir(parents=True)
    (store / "0123456789abcdef.json").write_text("{}")
    again = ledger.book_decisions("cpu")
    assert calls == ["cpu", "cpu", "cpu"] and again != first
    (store / "0123456789abcdef.json").write_text("{} ")  # rewritten: size changes
    ledger.book_decisions("cpu")
    assert len(calls) == 4
    (results / "cpu" / "checkpoints" / "x").mkdir(parents=True)  # read by no decision
    (results / "cpu" / "checkpoints" / "x" / "state.pt").write_text("step 100")
    ledger.book_decisions("cpu")
    assert len(calls) == 4
    mutated = ledger.book_decisions("cpu")
    mutated.clear()  # a caller's list is its own
    assert len(ledger.book_decisions("cpu")) == 1 and len(calls) == 4
    ledger._cached.cache_clear()  # the stand-in decisions stay in this test


def _sop_rows(low=6.2):
    base = dict(claim="sop_nsp", n_seeds=3, margin=2.0, unit="points", stage="no model",
                gate_reason="", premise="", p_equivalence=float("nan"),
                p_equivalence_holm=float("nan"))
    return pd.DataFrame([
        dict(base, label="bag of words on SOP pairs minus majority", paper_sign=0,
             estimate=8.7, low=low, high=11.2, p_difference=0.001, p_difference_holm=0.001),
        dict(base, label="SOP pairs, probe: SOP-trained minus NSP-trained", paper_sign=1,
             estimate=7.0, low=4.2, high=10.0, p_difference=0.01, p_difference_holm=0.2),
        dict(base, label="dropout 0.1 minus no dropout", paper_sign=-1, claim="dropout",
             unit="nats", margin=0.027, estimate=-0.03, low=-0.05, high=-0.01,
             p_difference=0.001, p_difference_holm=0.001)], index=["bow", "sop", "drop"])


def test_ledger_rows_are_paper_positive_and_label_holm_only_rows():
    """A row the paper signs -1 is turned (numbers and words); a claim of no difference
    keeps its own sign at every profile; a reading of no difference beside an interval
    excluding 0 says why."""
    later = _sop_rows(low=-1.0)
    table = ledger.ledger_table({"cpu": _sop_rows(), "cpu-long": later.iloc[:2]})
    decisions = list(table.index.get_level_values("decision"))
    assert decisions == ["bag of words on SOP pairs vs majority",
                         "SOP pairs, probe: SOP-trained vs NSP-trained",
                         "no dropout vs dropout 0.1"]
    assert table.iloc[0, 0].startswith("+8.7 [+6.2, +11.2] points")
    assert table.iloc[0, 1].startswith("+8.7 [-1.0, +11.2] points")
    assert table.iloc[1, 0] == ("+7.0 [+4.2, +10.0] points; undecided "
                                "(0 excluded only before Holm's adjustment)")
    assert table.iloc[2, 0] == "+0.030 [+0.010, +0.050] nats; holds here"
    assert table.iloc[2, 1] == "-"  # not made at that profile
    assert list(table.index.get_level_values("margin")) == ["±2 points", "±2 points",
                                                            "±0.027 nats"]
    assert ledger.paper_figure("-1.5 Avg") == "+1.5 Avg"
    assert ledger.paper_figure("52.0 (chance 50)") == "52.0 (chance 50)"


def test_the_csv_holds_every_decision_at_every_profile_and_downloads_from_the_page():
    import base64
    import io
    rows = _sop_rows().assign(method="bootstrap", in_family=False, arms=[(), ("a", "b"), ()],
                              paper="-1.5 Avg", verdict="x", verdict_holm="x")
    families = {"cpu": rows, "cpu-long": rows.iloc[:2]}
    frame = pd.read_csv(io.StringIO(ledger.ledger_csv(families)))
    assert list(zip(frame["key"], frame["profile"])) == [
        ("bow", "cpu"), ("sop", "cpu"), ("drop", "cpu"), ("bow", "cpu-long"), ("sop", "cpu-long")]
    drop = frame.iloc[2]
    assert (drop["estimate"], drop["estimate (paper-positive)"]) == (-0.03, 0.03)
    assert drop["paper_positive_figure"] == "+1.5 Avg" and frame["arms"][1] == "a / b"
    html = ledger.csv_link(families, "ledger-cpu.csv").data
    assert html.startswith('<a download="ledger-cpu.csv" href="data:text/csv;base64,')
    data = html.split("base64,")[1].split('"')[0]
    assert base64.b64decode(data).decode() == ledger.ledger_csv(families)
