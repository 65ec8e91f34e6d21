import pytest

from albert_rerun.profiles import PROFILES, pretraining_config


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
