"""The long pilot (studies.long_pilot): the confirmatory recipe on a 64x schedule."""
from albert_rerun.studies import confirm_design
from albert_rerun.studies import long_pilot as L
from albert_rerun.engine.store import config_hash


def test_the_arms_are_the_confirmatory_recipe_at_64_times_the_steps():
    base = confirm_design.conditions(None)
    for arm, c in L.configs().items():
        registered = base[arm]
        assert c.max_steps == 64 * 5400 == 345_600
        assert c.warmup_steps == registered.warmup_steps * 16  # 4x of cpu-long's schedule
        # every training choice but the schedule's length and the curve is the recipe's
        same = c.replace(max_steps=registered.max_steps, warmup_steps=registered.warmup_steps,
                         curve_every=registered.curve_every,
                         curve_examples=registered.curve_examples, seed=registered.seed)
        assert config_hash(same.to_dict()) == config_hash(registered.to_dict())
    assert set(L.configs()) == {confirm_design.ALL64, confirm_design.BERT}


def test_the_curve_has_at_least_48_points_and_three_inside_the_first_rung():
    c = L.configs()[confirm_design.BERT]
    assert c.max_steps // c.curve_every >= 48
    assert L.BASE_STEPS // c.curve_every == 3
    assert c.batch_size * c.max_seq_length * c.max_steps > 350e6  # tokens


def test_its_seed_is_not_a_confirmatory_one_and_progress_reads_no_loss(tmp_path):
    assert L.SEED not in confirm_design.CONFIRM_SEEDS
    assert L.SEED != confirm_design.LR_CHECK_SEED
    assert [p[1:] for p in L.progress(tmp_path)] == [(0, 345_600)] * 2
