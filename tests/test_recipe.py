"""The recipe search's analysis (studies.recipe): synthetic curves with known answers, and
the committed engine-v1 results against what the v1 chapter showed (be70d44)."""
import json

import numpy as np
import pandas as pd
import pytest

from albert_rerun.studies import recipe
from albert_rerun.profiles import pretraining_config

ROOT = recipe.results_root()


def named(folder: str) -> dict:
    return {recipe.run_name(r["config"]): r for r in recipe.stored_runs(ROOT / folder)}


# -- synthetic ------------------------------------------------------------------------------

def test_crossing_finds_the_first_point_past_a_level():
    curve = [{"step": 100, "mlm_loss_at_mask": 7.0}, {"step": 200},  # no loss recorded
             {"step": 300, "mlm_loss_at_mask": 6.7}, {"step": 400, "mlm_loss_at_mask": 6.6}]
    assert recipe.crossing(curve, 6.8)["step"] == 300
    assert recipe.crossing(curve, 6.0) is None
    assert recipe.crossing(curve, 6.65, below=False)["step"] == 100
    assert recipe.crossing(curve, 6.8, "mlm_accuracy") is None


def test_curve_difference_is_the_largest_absolute_difference_at_shared_steps():
    a = [{"step": s, "mlm_loss_at_mask": v} for s, v in ((1, 7.0), (2, 6.9), (3, 6.8))]
    b = [{"step": s, "mlm_loss_at_mask": v} for s, v in ((1, 7.1), (2, 6.6), (4, 0.0))]
    assert recipe.curve_difference(a, b) == pytest.approx(0.3)  # step 4 is not shared
    with pytest.raises(ValueError, match="share no step"):
        recipe.curve_difference(a, [{"step": 9, "mlm_loss_at_mask": 1.0}])


def test_context_free_copies_shown_targets_and_guesses_the_top_piece_at_mask():
    mask = 4
    ids = np.array([[mask, mask, mask, 7, 9, 1]])
    labels = np.array([[5, 5, 6, 7, 8, -100]])  # 7 shown unchanged, 9 a wrong random token
    levels = recipe.context_free(ids, labels, mask)
    assert levels["top"] == 5 and levels["all_targets"] == 5
    assert levels["plateau"] == pytest.approx(3 / 5)  # two 5s at [MASK], the copied 7
    assert levels["unigram"] == pytest.approx(2 / 5)
    assert levels["top_share"] == pytest.approx(2 / 3)


def test_grid_table_needs_every_seed_to_read_context():
    frame = pd.DataFrame([
        {"candidate": "a", "seed": s, "layers": 4, "schedule steps": 100, "s/step here": 0.1,
         "reads context at step": step, "at minute here": minute, "loss at [MASK]": 6.0,
         "threshold": 6.5}
        for s, step, minute in ((0, 50, 5.0), (1, 60, 6.0), (2, 70, 7.0))] + [
        {"candidate": "b", "seed": s, "layers": 2, "schedule steps": 100, "s/step here": 0.1,
         "reads context at step": step, "at minute here": minute, "loss at [MASK]": 6.6,
         "threshold": 6.5}
        for s, step, minute in ((0, 10, 1.0), (1, None, np.nan))])
    table = recipe.grid_table(frame)
    assert list(table.index) == ["b", "a"]  # by mean crossing minute
    assert table.loc["a", "reads within budget"] and not table.loc["b", "reads within budget"]
    assert table.loc["a", "minute"] == pytest.approx(6.0)
    assert table.loc["a", "95% interval (minutes)"] == "3.5 to 8.5"  # t(2) 4.303 x 1/sqrt 3
    assert pd.isna(table.loc["b", "95% interval (minutes)"])


def test_diverged_runs_are_read_from_the_session_logs(tmp_path):
    log = tmp_path / "session-1.log"
    log.write_text("a: 100 steps, loss 6.9\nb: FAILED ValueError: Input X contains NaN.\n"
                   "c: FAILED RuntimeError: out of memory\n")
    assert recipe.diverged_runs([log]) == {"b": "session-1.log"}


# -- the committed results of engine v1 -----------------------------------------------------

def test_every_stored_run_is_named_and_every_planned_run_accounted_for():
    assert set(named("recipe")) == set(recipe.CANDIDATES)
    device = set(named("recipe-grid/cuda"))
    diverged = recipe.diverged_runs(sorted((ROOT / "recipe-grid" / "cuda").glob("*.log")))
    assert device - set(recipe.planned_grid()) == {recipe.CHOSEN}
    assert set(recipe.planned_grid()) == (device - {recipe.CHOSEN}) | set(diverged)
    assert len(diverged) == 3


def test_legacy_levels_are_the_figures_the_v1_chapter_showed():
    """be70d44:notebooks/00_recipe.ipynb: context-free 14.1% on 2543 targets; unigram
    6.937 (SE 0.057), left bigram 6.540 nats at [MASK]; threshold 6.824."""
    config = named("recipe")[recipe.CHOSEN]["config"]
    levels = recipe.legacy_reference_levels(config)
    assert round(100 * levels["plateau"], 1) == 14.1 and levels["all_targets"] == 2543
    rungs = levels["rungs"]
    assert (round(rungs["unigram_loss_at_mask"], 3), round(rungs["unigram_loss_se"], 3),
            round(rungs["bigram_loss_at_mask"], 3)) == (6.937, 0.057, 6.540)
    assert round(levels["reads_context"], 3) == 6.824
    with pytest.raises(ValueError, match="'none'"):
        recipe.legacy_reference_levels({**config, "objective": "none"})


def test_grid_table_of_the_stored_runs():
    device = named("recipe-grid/cuda")
    grid = {n: device[n] for n in recipe.planned_grid() if n in device}
    seconds = json.loads((ROOT / "recipe-grid" / "step-seconds.json").read_text())
    table = recipe.grid_table(recipe.grid_frame(grid, seconds["step_seconds"]))
    assert len(table) == 22 and table["seeds"].sum() == 28
    readers = table[table["reads within budget"]]
    assert len(readers) == 8 and readers.index[0] == "H64-L2-B16-T64-lamb-0.005"
    deep = readers[readers["layers"] == 4]
    assert deep.index[0] == "H64-L4-B16-T64-lamb-0.005"
    assert deep.iloc[0]["seeds"] == 3 and round(deep.iloc[0]["minute"], 1) == 4.0
    assert deep.iloc[0]["95% interval (minutes)"] == "3.5 to 4.5"


def test_cpu_profile_trains_the_grids_fastest_four_layer_candidate():
    """The profile (today's PretrainConfig) is the recipe the search chose: equal on every
    field that shapes training; a changed learning rate is not."""
    chosen = named("recipe-grid/cuda")["H64-L4-B16-T64-lamb-0.005"]["config"]
    profile = pretraining_config("cpu")
    assert recipe.trains_candidate(profile, chosen)
    assert not recipe.trains_candidate(profile.replace(learning_rate=1e-2), chosen)
    assert not recipe.trains_candidate(profile.replace_model(hidden_size=128), chosen)


def test_the_check_between_machines_is_the_v1_chapters():
    """be70d44's chapter: the chosen recipe's CPU and GPU curves differ by at most 0.012
    nats."""
    here, there = named("recipe")[recipe.CHOSEN], named("recipe-grid/cuda")[recipe.CHOSEN]
    assert round(recipe.curve_difference(here["curve"], there["curve"]), 3) == 0.012


def test_the_chapter_names_each_size_and_the_search_held_out_set():
    """The whole analysis (what the chapter glues): the candidates' size is H = 128, the
    profile's H = 64 at 8,000 pieces, the profile trains the grid's fastest four-layer
    pick, and the levels are the search's held-out set's."""
    search = recipe.load()
    values = search.values
    assert "H = 128" in values["search_size"] and values["search_width"] == 128
    assert values["wide_readers"] == 0  # none at the candidates' width and depth
    assert values["deep_fastest"] == "H64-L4-B16-T64-lamb-0.005"
    assert values["profile_trains_fastest"] and values["profile_size"].startswith("H = 64,")
    assert (values["grid_readers"], values["grid_candidates"], values["grid_runs"]) == (8, 22, 28)
    assert round(values["plateau_accuracy"], 1) == 14.1 and values["vocabulary_kept"] == 8000
    assert search.tables["again here"].loc["H64-L4-B16-T64-lamb-0.005",
                                           "reads context here at minute"] == 4.3
    table = recipe.levels_table(search.levels)
    assert list(table.columns) == ["recipe search"]
    assert table.loc["reads-context threshold (nats)", "recipe search"] == "6.824"


def test_the_first_candidate_off_the_plateau_is_no_clear_winner():
    """The accuracy rule's first crosser is the 4,000-piece candidate, by less than two
    standard errors: the chapter's first screen names the recipe the profile trains
    instead, and no candidate of the first round reads context within the budget."""
    values = recipe.load().values
    assert values["plateau_first"] == "lamb-5e-3-init-0.05-sinusoidal-v4000-long"
    assert values["plateau_first_vocabulary"] == 4000
    assert values["plateau_margin"] < 2 * values["plateau_noise"]
    assert values["earliest_reader_minutes"] > values["budget_minutes"]
    assert values["bigram_reached"] == "none"

