"""The gpu profile's plan without a GPU: its learning-rate search and the pick that
pretraining_config reads, the device script's two halves, the predicted GPU time, and
a gpu notebook on a CPU stopping with its predicted time unless allowed."""
import json

import pytest
import torch

from albert_rerun import profiles
from albert_rerun.studies import conditions as C
from albert_rerun.studies import driver, gpu_search
from albert_rerun.book.setup import notebook_setup
from albert_rerun.profiles import resolve


def test_search_is_six_short_runs_at_the_base_size_and_an_unused_seed():
    grid = gpu_search.conditions(resolve("gpu"))
    assert set(grid) == {(r, w) for r in (2.5e-3, 5e-3, 1e-2) for w in (0.02, 0.06)}
    base = profiles.pretraining_config("gpu")
    for (rate, share), config in grid.items():
        assert config.model == base.model and config.batch_size == base.batch_size
        assert config.learning_rate == rate and config.optimizer == "lamb"
        assert config.max_steps == base.max_steps // 4
        assert config.warmup_steps == round(share * config.max_steps)
        assert config.seed == gpu_search.SEARCH_SEED
    smoke = gpu_search.conditions(resolve("smoke"))  # the dry run's: six distinct runs too
    assert len({c for c in smoke.values()}) == 6
    assert gpu_search.SEARCH_SEED not in (C.SWEEP_SEED, *range(profiles.PROFILES["gpu"].default_seeds))


def test_the_stored_pick_sets_the_gpu_profiles_rate_and_warm_up(tmp_path, monkeypatch):
    monkeypatch.setenv("ALBERT_RERUN_RESULTS", str(tmp_path))
    before = profiles.pretraining_config("gpu")
    assert (before.learning_rate, before.warmup_steps) == (5e-3, before.max_steps // 20)
    grid_before = gpu_search.conditions(resolve("gpu"))
    choice = tmp_path / "gpu" / "choices" / f"{profiles.GPU_SEARCH_CHOICE}.json"
    choice.parent.mkdir(parents=True)
    choice.write_text(json.dumps({"learning_rate": 1e-2, "warmup_share": 0.02}))
    after = profiles.pretraining_config("gpu")
    assert (after.learning_rate, after.warmup_steps) == (1e-2, round(0.02 * after.max_steps))
    assert profiles.pretraining_config("cpu").learning_rate == 5e-3  # the gpu profile only
    assert gpu_search.conditions(resolve("gpu")) == grid_before  # the search does not move with it


def test_two_parts_cover_every_claim_once_in_order_and_about_evenly():
    first, second = (driver.claims_part(resolve("gpu"), k, 2) for k in (1, 2))
    assert first + second == list(C.CLAIMS)
    plan = driver.planned_pretraining(resolve("gpu"))
    flops = {n: sum(C.step_flops(c) * c.max_steps for c in plan[n]) for n in C.CLAIMS}
    flops["wall_clock"] += sum(C.step_flops(c) * c.max_steps for c in plan["wide sweep"])
    share = sum(flops[n] for n in first) / sum(flops.values())
    assert 0.3 < share < 0.7
    with pytest.raises(ValueError):
        driver.claims_part(resolve("gpu"), 3, 2)


def test_predicted_gpu_time_lists_every_planned_run(capsys):
    total = driver.print_predicted(resolve("gpu"), "cuda")
    out = capsys.readouterr().out
    plan = driver.planned_pretraining(resolve("gpu"))
    assert sum(len(v) for v in plan.values()) == out.count(" steps: ")
    configs = [c for stage in plan.values() for c in stage]
    assert total == pytest.approx(driver.predicted_seconds(configs, "cuda"))
    assert f"total: {total:,.0f} s" in out


def test_a_gpu_notebook_on_a_cpu_states_its_predicted_time(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    with pytest.raises(ValueError, match=r"would train for about [\d,]+ hours here") as info:
        notebook_setup("gpu")
    assert "allow_cpu=True" in str(info.value)
    assert notebook_setup("gpu", allow_cpu=True).profile.name == "gpu"
    assert notebook_setup("cpu").profile.name == "cpu"
