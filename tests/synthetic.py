"""Synthetic runs whose answer is known, for the tests of the claims' decisions: per-seed
offsets shared by every condition, small fixed per-run wobbles, and per-item
correctness strings."""
import numpy as np
import pandas as pd

from albert_rerun.studies.decisions import CE


# Per-seed offsets shared by every condition (the seed's own luck, which pairing
# removes), and small per-run wobbles, fixed so that every verdict is reproducible.
SEED_OFFSET = np.array([0.06, -0.04, 0.01, -0.07, 0.03])
WOBBLE = {"A": np.array([0.002, -0.001, 0.003, -0.002, 0.0]),
          "B": np.array([-0.001, 0.002, -0.002, 0.001, 0.001]),
          "C": np.array([0.001, 0.0, -0.001, 0.002, -0.002])}


def runs(effects: dict, seeds: int = 5, scale: float = 1.0) -> pd.DataFrame:
    """One row per (condition, seed): cross-entropy 6.5 + seed offset + effect + wobble
    (times ``scale``)."""
    return pd.DataFrame([{"condition": name, "seed": s,
                          CE: 6.5 + SEED_OFFSET[s] + effect + scale * WOBBLE[name][s]}
                         for name, effect in effects.items() for s in range(seeds)])


def strings(rng, p, items):
    """Per-item correctness ('1' right, '0' wrong) of ``items`` items at accuracy ``p``."""
    return "".join("1" if x else "0" for x in rng.random(items) < p)


def stored_run(folder, config):
    """A stored pretraining result of ``config`` (its initialized weights) in the store
    ``folder``, as engine.pretrain.run writes one; returns (folder, result, the model)."""
    import torch

    from albert_rerun import AlbertForPreTraining
    from albert_rerun.engine import store
    torch.manual_seed(config.seed)
    model = AlbertForPreTraining(config.model)
    path = store.pretrain_path(folder, config)
    weights = store.save_weights(path.with_suffix(".safetensors"), model.state_dict())
    result = {"config": config.to_dict(), "hash": path.stem, "metrics": {"steps": 0},
              "curve": [], "weights": weights}
    store.atomic_write_json(path, result)
    return folder, result, model
