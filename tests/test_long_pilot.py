"""The long pilot (studies.long_pilot): the confirmatory recipe on a 64x schedule."""
from albert_rerun.studies import confirm_analysis
from albert_rerun.studies import long_pilot as L
from albert_rerun.engine.store import config_hash


def test_the_arms_are_the_confirmatory_recipe_at_64_times_the_steps():
    base = confirm_analysis.conditions(None)
    for arm, c in L.configs().items():
        registered = base[arm]
        assert c.max_steps == 64 * 5400 == 345_600
        assert c.warmup_steps == registered.warmup_steps * 16  # 4x of cpu-long's schedule
        # every training choice but the schedule's length and the curve is the recipe's
        same = c.replace(max_steps=registered.max_steps, warmup_steps=registered.warmup_steps,
                         curve_every=registered.curve_every,
                         curve_examples=registered.curve_examples, seed=registered.seed)
        assert config_hash(same.to_dict()) == config_hash(registered.to_dict())
    assert set(L.configs()) == {confirm_analysis.ALL64, confirm_analysis.BERT}


def test_the_curve_has_at_least_48_points_and_three_inside_the_first_rung():
    c = L.configs()[confirm_analysis.BERT]
    assert c.max_steps // c.curve_every >= 48
    assert L.BASE_STEPS // c.curve_every == 3
    assert c.batch_size * c.max_seq_length * c.max_steps > 350e6  # tokens


def test_its_seed_is_not_a_confirmatory_one_and_progress_reads_no_loss(tmp_path):
    assert L.SEED not in confirm_analysis.CONFIRM_SEEDS
    assert L.SEED != confirm_analysis.LR_CHECK_SEED
    assert [p[1:] for p in L.progress(tmp_path)] == [(0, 345_600)] * 2


# -- what it shows once stored: synthetic curves (the real ones are read by the book) --------

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from albert_rerun.book import scale as S  # noqa: E402


def _runs(shared_ce, bert_ce, every=1800):
    """A frame like ``long_pilot.frame``'s: two arms, their curves and final metrics."""
    rows = []
    for arm, ce in ((confirm_analysis.ALL64, shared_ce), (confirm_analysis.BERT, bert_ce)):
        curve = [{"step": every * (i + 1), "tokens": 1024 * every * (i + 1),
                  L.CE: float(v)} for i, v in enumerate(ce)]
        rows.append({"condition": arm, "seed": L.SEED, "curve": curve,
                     "tokens": curve[-1]["tokens"], L.CE: float(ce[-1])})
    return pd.DataFrame(rows)


def _smooth(n, start=7.5, end=5.5):
    """A loss that falls fast, then slower and slower: no sudden drop."""
    t = np.arange(1, n + 1)
    return end + (start - end) / np.sqrt(t)


def test_a_smoothly_falling_curve_has_no_sudden_drop_and_a_plateau_then_cliff_has_one():
    smooth = _smooth(192)
    curve = L.curves(_runs(smooth, smooth + 0.1))
    assert L.sudden_drops(curve).empty
    cliff = np.r_[np.full(40, 6.6) - np.arange(40) * 1e-3, np.full(152, 6.0)]
    cliff += np.linspace(0, -0.05, 192)
    drops = L.sudden_drops(L.curves(_runs(cliff, smooth)))
    assert list(drops["arm"]) == [confirm_analysis.ALL64]
    assert drops["step"].iloc[0] == 41 * 1800 and drops["fall"].iloc[0] > 0.5
    assert not drops["warm-up"].iloc[0]  # 73,800 steps, past the 17,280 of warm-up


def test_a_spike_and_its_recovery_is_no_drop_and_the_blind_zone_is_never_judged():
    spiky = _smooth(192)
    spiky[100] += 0.4  # one bad point: the next falls 0.4 back to where it was
    assert L.sudden_drops(L.curves(_runs(spiky, _smooth(192)))).empty
    early = _smooth(192)
    early[3:] -= 1.0  # a cliff inside the first DROP_WINDOW intervals: not judged
    assert L.sudden_drops(L.curves(_runs(early, _smooth(192)))).empty
    late = _smooth(192)
    late[8:] -= 0.5  # the first interval past the blind zone: judged, during warm-up
    drops = L.sudden_drops(L.curves(_runs(late, _smooth(192))))
    assert list(drops["step"]) == [9 * 1800] and drops["warm-up"].all()


def test_late_noise_on_a_flat_curve_is_no_drop_but_a_late_new_low_is():
    rng = np.random.default_rng(0)
    flat = 5.6 + rng.normal(0, 0.01, 192)  # falls of ~0.01 around a median fall of ~0
    assert L.sudden_drops(L.curves(_runs(flat, _smooth(192)))).empty
    flat[150:] -= 0.1
    drops = L.sudden_drops(L.curves(_runs(flat, _smooth(192))))
    assert list(drops["step"]) == [151 * 1800]


def test_crossings_name_the_first_point_below_each_rung_or_none():
    ce = np.linspace(7.0, 5.9, 12)
    curve = L.curves(_runs(ce, ce - 0.5, every=100))
    cross = L.crossings(curve, {"left bigram": 6.147, "two-sided": 5.710}).set_index(
        ["arm", "rung"])
    first = int(np.argmax(ce < 6.147))
    assert cross.loc[(confirm_analysis.ALL64, "left bigram"), "step"] == 100 * (first + 1)
    assert np.isnan(cross.loc[(confirm_analysis.ALL64, "two-sided"), "tokens"])
    assert not np.isnan(cross.loc[(confirm_analysis.BERT, "two-sided"), "tokens"])


def test_the_cost_along_training_is_shared_minus_bert_at_each_common_step():
    cost = L.cost_along(L.curves(_runs(_smooth(192) + 0.2, _smooth(192))))
    assert len(cost) == 192 and np.allclose(cost["cost"], 0.2)
    assert set(L.MARKS.values()) <= set(cost["step"])


def test_the_page_has_no_results_until_both_arms_are_stored(tmp_path):
    assert S.pilot_runs(tmp_path) is None  # an empty store
    values = S.pilot_values(None)
    assert "pilot_ce_shared" not in values and values["pilot_steps"] == "345,600"


def test_once_stored_the_tables_give_crossings_drops_costs_and_a_legible_figure():
    from figure_checks import figure_problems
    runs = _runs(_smooth(192) + 0.2, _smooth(192))
    rungs = {"unigram": 6.685, "left bigram": 6.147, "two-sided": 5.710}
    curve = L.curves(runs)
    assert S.drops_table(L.sudden_drops(curve)) == "No sudden drop appears.\n"
    costs = S.costs_table(curve)
    assert "| 1x | 5,400 |" in costs and costs.count("+0.200") == 4
    crossings = S.crossings_table(curve, rungs)
    shared = [line for line in crossings.splitlines() if line.startswith("| all shared")][0]
    assert shared.endswith("| never |")  # its curve ends above 5.71
    assert "never" not in [line for line in crossings.splitlines()
                           if line.startswith("| BERT-style")][0]
    # the paper's own figure for this comparison (Table 4, E = H = 768)
    paper = S.paper_cost()
    assert (paper["pilot_paper_shared"], paper["pilot_paper_bert"],
            paper["pilot_paper_cost"]) == ("79.8", "82.3", "2.5")
    assert figure_problems(S.pilot_figure(curve, rungs)) == []


def test_the_committed_pilot_is_read_against_rungs_on_its_curves_sequences(monkeypatch):
    """The curve scores the first 1,024 held-out sequences; the rungs it crosses are
    scored there (issue #55), and its end cost is the sharing cost's arms at 64x."""
    from albert_rerun.paths import repo_root
    from albert_rerun.profiles import resolve
    from albert_rerun.studies import count_rungs
    monkeypatch.setenv("ALBERT_RERUN_RESULTS", str(repo_root() / "data" / "results"))
    runs = S.pilot_runs()
    assert runs is not None
    assert S.pilot_rungs() == count_rungs.levels_on(
        resolve(confirm_analysis.PILOT_PROFILE).evaluation, L.CURVE_EXAMPLES)
    ce = runs.set_index("condition")[L.CE]
    values = S.pilot_values(runs)
    assert values["pilot_sharing_64x"] == \
        f"{ce[confirm_analysis.ALL64] - ce[confirm_analysis.BERT]:+.3f}" == "+0.146"
    assert values["pilot_peak_where"] == "between the two arms' sudden drops"
