"""The asymmetry study's pilot (issue #54): the common draw and the pilot's configs."""
import json

import pytest
import torch

from albert_rerun.engine.config import PretrainConfig
from albert_rerun.engine.store import config_hash
from albert_rerun.model.config import ModelConfig
from albert_rerun.model.modeling import AlbertForPreTraining
from albert_rerun.paths import repo_root
from albert_rerun.studies import asymmetry_pilot as P
from albert_rerun.studies import confirm_analysis as D
from albert_rerun.studies import ladder, long_pilot

SMALL = dict(vocab_size=300, embedding_size=16, hidden_size=32, num_hidden_layers=4,
             num_attention_heads=2, intermediate_size=64, max_position_embeddings=64)


def _weights(sharing: str, draw: str, seed: int = 5) -> dict:
    torch.manual_seed(seed)
    config = ModelConfig(**SMALL, sharing=sharing, init_draw=draw)
    return AlbertForPreTraining(config).state_dict()


@pytest.mark.parametrize("sharing", ["attention", "ffn", "all"])
def test_common_draw_starts_every_shared_block_as_the_not_shared_models(sharing):
    plain, shared = _weights("none", "common"), _weights(sharing, "common")
    assert set(shared) <= set(plain)
    assert all(torch.equal(shared[name], plain[name]) for name in shared)


def test_the_plain_draw_differs_between_arms_and_the_common_draw_between_seeds():
    plain, shared = _weights("none", "stream"), _weights("attention", "stream")
    differ = [n for n in shared if not torch.equal(shared[n], plain[n])]
    assert any("ffn_blocks" in n for n in differ)  # what the common draw removes
    other = _weights("none", "common", seed=6)
    assert not torch.equal(other["albert.encoder.ffn_blocks.0.ffn.weight"],
                           _weights("none", "common")["albert.encoder.ffn_blocks.0.ffn.weight"])


def test_init_draw_is_validated_and_left_out_of_the_hash_at_its_default():
    with pytest.raises(ValueError, match="init_draw"):
        ModelConfig(**SMALL, init_draw="shared")
    assert "init_draw" not in ModelConfig(**SMALL).to_dict()
    assert ModelConfig(**SMALL, init_draw="common").to_dict()["init_draw"] == "common"
    stored = sorted((repo_root() / "data/results/ladder/pretrain").glob("*.json"))[0]
    run = json.loads(stored.read_text())
    assert config_hash(PretrainConfig.from_dict(run["config"]).to_dict()) == run["hash"]


def test_the_widened_ffn_holds_the_attention_shared_models_parameters():
    counts = P.parameters()
    for layers in (4, P.DEEP_LAYERS):
        widened, attention = counts[(P.WIDENED, layers)], counts[(D.ATTENTION, layers)]
        assert abs(widened - attention) / attention < 0.002
        assert counts[(D.FFN, layers)] < attention < counts[(D.NONE32, layers)]
    assert (P.widened_ffn(4), P.widened_ffn(12)) == (640, 1664)


def test_the_pilot_runs_are_the_designs_and_their_seeds_are_their_own():
    crn = P.crn_configs()
    one = ladder.configs("1x")
    for (arm, seed), config in crn.items():
        assert config.replace_model(init_draw="stream") == one[arm].replace(seed=seed)
    deep = P.deep_configs()
    assert {c.model.num_hidden_layers for (_, layers), c in deep.items()} == {4, 12}
    assert all(c.curve_every * P.CURVE_POINTS == c.max_steps == P.STEPS for c in deep.values())
    others = set(D.CONFIRM_SEEDS) | {long_pilot.SEED} | {s for v in ladder.SEEDS.values()
                                                         for s in v}
    assert P.DEEP_SEED not in others
    hashes = [config_hash(c.to_dict()) for c in P.planned()]
    assert len(set(hashes)) == len(hashes)


def test_the_pilot_reads_the_sd_ratio_and_the_tokens_to_a_rung():
    import pandas as pd
    table = pd.DataFrame({"plain": [0.02, -0.02, 0.01, -0.01], "common": [0.01, -0.01, 0.005,
                                                                          -0.005]})
    s = P.crn_summary(table)
    assert s["sd ratio"] == pytest.approx(0.5) and s["correlation"] == pytest.approx(1.0)
    assert s["sd ratio low"] < 0.5 < s["sd ratio high"]
    curve = [{"tokens": 100, D.CE: 7.0}, {"tokens": 200, D.CE: 6.1}, {"tokens": 300, D.CE: 5.9}]
    assert P.tokens_to(curve, 6.147) == 200 and P.tokens_to(curve, 5.0) != P.tokens_to(curve, 5.0)


def test_the_common_draw_runs_are_stored_beside_the_ladders():
    """The pilot's first part is complete: six seeds of each arm, common draw."""
    stores = repo_root() / "data" / "results"
    table = P.crn_differences(stores / P.STORE, stores / ladder.STORE)
    assert list(table.index) == list(P.CRN_SEEDS)
    assert table.notna().all().all()
