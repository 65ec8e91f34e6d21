"""What smoke, cpu and gpu mean: sizes, the recipe the cpu profile adopted, and every
model the cpu and gpu profiles would train (they are not trained in CI)."""
import json

import pytest
import torch

from albert_rerun import AlbertForPreTraining, ModelConfig
from albert_rerun.studies import conditions as C
from albert_rerun.studies.driver import planned_controls, planned_runs
from albert_rerun.engine.pretrain import make_optimizer
from albert_rerun.engine.store import config_hash
from albert_rerun.paths import repo_root
from albert_rerun.profiles import (PROFILES, eval_config, pretraining_config, resolve,
                                   validate_parameters)

pytestmark = pytest.mark.usefixtures("single_thread")


@pytest.mark.parametrize("profile", list(PROFILES))
@pytest.mark.parametrize("style", ["albert", "bert"])
def test_pretraining_config_per_profile(profile, style):
    config = pretraining_config(profile, style)
    model = config.model
    if style == "albert":
        assert model.sharing == "all" and model.embedding_size < model.hidden_size
    else:
        assert model.sharing == "none" and not model.has_projection
    assert config.max_seq_length <= model.max_position_embeddings
    assert config.model.vocab_size == 8000


def test_profile_sizes_grow():
    sizes = [pretraining_config(p).model.hidden_size for p in ("smoke", "cpu", "gpu")]
    assert sizes == sorted(sizes) and len(set(sizes)) == 3


def test_the_gpu_profile_trains_models_a_cpu_cannot():
    """Issue 12: H >= 256, T = 128, batch >= 128; Figure 1's 24 layers for transitions."""
    config = pretraining_config("gpu")
    assert config.model.hidden_size >= 256 and config.max_seq_length == 128
    assert config.batch_size >= 128
    transitions = C.transitions(resolve("gpu"))
    assert {c.model.num_hidden_layers for c in transitions.values()} == {24}
    assert {c.model.num_hidden_layers for c in C.transitions(resolve("cpu")).values()} == {12}


def test_overrides_and_bad_values():
    config = pretraining_config("cpu", objective="nsp", seed=3,
                                model_changes={"sharing": "ffn"})
    assert (config.objective, config.seed, config.model.sharing) == ("nsp", 3, "ffn")
    with pytest.raises(ValueError, match="profile"):
        pretraining_config("laptop")
    with pytest.raises(ValueError, match="style"):
        pretraining_config("cpu", "roberta")
    with pytest.raises(ValueError, match="sharing"):
        pretraining_config("cpu", model_changes={"sharing": "half"})


@pytest.mark.parametrize("profile", list(PROFILES))
def test_evaluation_scores_the_profiles_sequences(profile):
    evaluation, config = eval_config(profile), pretraining_config(profile)
    assert (evaluation.max_seq_length, evaluation.max_predictions) == (
        config.max_seq_length, config.max_predictions)
    small = profile == "smoke"
    assert (evaluation.task_examples > 0) == small and (evaluation.mlm_sequences < 1000) == small
    tuning = resolve(profile).finetune_config()  # its own evaluation, its own key
    assert tuning.protocol.max_seq_length <= config.max_seq_length
    assert tuning.key != evaluation.key
    assert (tuning.protocol.max_train_examples == 0) == (not small)  # the whole split


def test_finetune_rates_default_until_the_pilot_is_stored(results):
    from albert_rerun.profiles import DEFAULT_FINETUNE_RATES
    assert resolve("cpu").finetune_rates() == DEFAULT_FINETUNE_RATES
    before = resolve("cpu").finetune_config().key
    choice = results / "cpu" / "choices" / "finetune-rates.json"
    choice.parent.mkdir(parents=True)
    choice.write_text(json.dumps({"chosen": {"pretrained": 1e-3, "untrained": 3e-3}}))
    assert resolve("cpu").finetune_rates() == {"pretrained": 1e-3, "untrained": 3e-3}
    assert resolve("cpu").finetune_config().protocol.learning_rate == 1e-3
    assert resolve("cpu").finetune_config().key != before  # a new pick is a new evaluation
    assert resolve("smoke").finetune_rates() == DEFAULT_FINETUNE_RATES  # smoke never picks


@pytest.mark.parametrize("name", list(PROFILES))
def test_a_profile_is_resolved_once_into_its_settings_configs_and_folder(name):
    """resolve(name): the same object on a second call (and for the object itself),
    holding what the name's lookups give: settings, sizes, results folder, evaluation."""
    from albert_rerun.engine.store import results_dir
    from albert_rerun.profiles import SIZES
    profile = resolve(name)
    assert resolve(name) is profile and resolve(profile) is profile
    assert profile.name == name and profile.settings == PROFILES[name]
    assert profile.default_seeds == PROFILES[name].default_seeds
    assert profile.description == PROFILES[name].description
    assert profile.sizes == SIZES[name] and profile.results == results_dir(name)
    assert profile.choices == results_dir(name) / "choices"
    assert profile.evaluation == eval_config(name)
    assert profile.evaluation.key == eval_config(name).key
    for style in ("albert", "bert"):
        assert profile.pretraining_config(style) == pretraining_config(name, style)
    assert (profile.pretraining_config(objective="nsp", seed=2)
            == pretraining_config(name, objective="nsp", seed=2))
    

def test_the_resolved_results_folder_follows_the_environment(tmp_path, monkeypatch):
    """$ALBERT_RERUN_RESULTS moves the folder (CI's temporary store); a profile resolved
    under it holds that folder, and one resolved after it is unset the default again."""
    from albert_rerun.engine.store import results_dir
    monkeypatch.delenv("ALBERT_RERUN_RESULTS", raising=False)
    default = resolve("cpu")
    monkeypatch.setenv("ALBERT_RERUN_RESULTS", str(tmp_path))
    moved = resolve("cpu")
    assert moved.results == tmp_path / "cpu" == results_dir("cpu")
    assert moved is not default and moved != default
    assert moved.evaluation == default.evaluation  # the same held-out sets
    monkeypatch.delenv("ALBERT_RERUN_RESULTS")
    assert resolve("cpu") is default


def test_an_unknown_profile_fails_where_it_is_resolved():
    with pytest.raises(ValueError, match=r"^profile must be one of \('smoke', 'cpu', "
                                         r"'gpu', 'cpu-long'\), got 'laptop'$"):
        resolve("laptop")
    for bad in (None, 3, ["cpu"]):
        with pytest.raises(ValueError, match="profile must be one of"):
            resolve(bad)
    with pytest.raises(ValueError, match="parameter 'profile' must be one of"):
        validate_parameters("laptop")  # a notebook's parameter: its own one-line error
    settings = validate_parameters("smoke")
    assert settings.profile is resolve("smoke") and settings.seeds == (0,)


def test_a_resolved_profile_reads_the_stores_picks_when_asked(results):
    """The fine-tuning rates the driver's pilot stores mid-run are read at each call, not
    frozen when the profile was resolved."""
    import pickle

    cpu = resolve("cpu")
    before = cpu.finetune_config()
    choice = results / "cpu" / "choices" / "finetune-rates.json"
    choice.parent.mkdir(parents=True)
    choice.write_text(json.dumps({"chosen": {"pretrained": 1e-3, "untrained": 3e-3}}))
    assert cpu.finetune_config().protocol.learning_rate == 1e-3
    assert cpu.finetune_config().key != before.key
    assert pickle.loads(pickle.dumps(cpu)) == cpu  # the worker pool pickles it


def _grid_run(shape, optimizer, learning_rate, seed=0):
    """The stored recipe-grid run (engine v1) of a shape and optimizer, at ``seed``."""
    H, L, B, T = shape
    for path in sorted((repo_root() / "data" / "results" / "recipe-grid").glob("*/*.json")):
        result = json.loads(path.read_text())
        c = result.get("config")
        if c and (c["model"]["hidden_size"], c["model"]["num_hidden_layers"], c["batch_size"],
                  c["max_seq_length"], c["optimizer"], c["learning_rate"], c["seed"]) == (
                H, L, B, T, optimizer, learning_rate, seed):
            return c
    raise LookupError(f"no stored grid run H{H}-L{L}-B{B}-T{T}-{optimizer}-{learning_rate:g}")


def test_cpu_profile_is_the_grids_chosen_shape():
    """The cpu profile trains the recipe grid's H64-L4-B16-T64 LAMB 5e-3 candidate on its
    schedule: the same model, optimizer and schedule fields (evaluation sizes and the
    curve's spacing may differ)."""
    stored = _grid_run((64, 4, 16, 64), "lamb", 5e-3)
    profile = pretraining_config("cpu")
    assert ModelConfig.from_dict(stored["model"]) == profile.model
    for field in ("objective", "max_seq_length", "batch_size", "max_predictions", "optimizer",
                  "learning_rate", "warmup_steps", "max_steps", "weight_decay",
                  "train_documents"):
        assert getattr(profile, field) == stored[field], field
    assert (profile.model.embedding_size, profile.model.num_attention_heads) == (32, 2)


@pytest.mark.parametrize("profile", ["cpu", "gpu"])
def test_every_planned_model_takes_a_training_step(profile):
    """Each distinct model the profile would train (24 layers for the gpu transitions,
    the wide models of the wall-clock claim and its sweep, the controls) builds and
    takes one finite step."""
    profile = resolve(profile)
    runs = planned_runs(profile, [0], C.CLAIMS, wide_learning_rate=5e-3, planning=True)
    runs += list(C.wide_sweep(profile).values()) + planned_controls(runs)
    models = {}
    for config in runs:
        models.setdefault(config_hash(config.model.to_dict()), config)
    assert len(models) >= 12
    torch.manual_seed(0)
    for config in models.values():
        model = AlbertForPreTraining(config.model)
        ids = torch.randint(5, config.vocab_size, (2, 12))
        positions = torch.tensor([[3, 5], [1, 0]])
        labels = torch.stack([ids[0, [3, 5]], torch.tensor([ids[1, 1], -100])])
        out = model(ids, torch.zeros_like(ids), torch.ones_like(ids), mlm_labels=labels,
                    mlm_positions=positions, sentence_labels=torch.tensor([0, 1]))
        out.loss.backward()
        assert torch.isfinite(out.loss), config.model
        make_optimizer(model, config).step()
        assert all(torch.isfinite(p).all() for p in model.parameters()), config.model


def test_profiles_is_configuration_and_imports_nothing_above_the_engine():
    """In a fresh interpreter, importing albert_rerun.profiles and calling each of its
    functions (the gpu profile's validation included) loads no claims module and not
    the engine's bench: the configuration sits below the driver and the bench that
    read it."""
    import subprocess
    import sys
    code = ("import sys\n"
            "from albert_rerun import profiles as p\n"
            "for name in p.PROFILES:\n"
            "    p.validate_parameters(name, None, 'cpu')\n"
            "    p.pretraining_config(name, 'albert'), p.pretraining_config(name, 'bert')\n"
            "    p.eval_config(name), p.resolve(name).finetune_config()\n"
            "print([m for m in sys.modules if m.startswith('albert_rerun.studies')\n"
            "       or m.startswith('albert_rerun.engine.bench')])\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, cwd=repo_root())
    assert out.stdout.strip() == "[]", out.stdout
