"""The results store: pretraining runs, their weights, and evaluations of them.

Layout under ``results_dir(profile)``:

- ``pretrain/<hash>.json``: a pretraining run (config, learning curve, step times,
  provenance), named by the hash of its config;
- ``pretrain/<hash>.safetensors``: its final weights in float16, checked against the
  SHA-256 the JSON records before anything reads them;
- ``eval/<eval hash>/<hash>.json``: one evaluation of that run, keyed by (pretraining
  hash, evaluation hash), so a change of evaluation never forces pretraining again;
- ``checkpoints/<hash>/``: the resumable state of a run in progress (not committed).

Writes are atomic (a temporary file renamed into place), so a killed run never leaves
a half-written file; a corrupt JSON is reported and recomputed.
"""
from __future__ import annotations

import hashlib
import json
import logging
import os
import tempfile
from pathlib import Path

from ..paths import repo_root

log = logging.getLogger(__name__)
WEIGHTS_DTYPE = "float16"  # half the size of float32; evaluation always reads this copy


class WeightsError(RuntimeError):
    """A stored weight file is missing or does not match its recorded checksum."""


def config_hash(config: dict) -> str:
    """A stable 16-hex-digit name for a resolved config dict."""
    text = json.dumps(config, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def results_dir(profile: str) -> Path:
    """data/results/<profile>, or $ALBERT_RERUN_RESULTS/<profile> (CI: a temporary dir)."""
    base = os.environ.get("ALBERT_RERUN_RESULTS")
    return (Path(base) if base else repo_root() / "data" / "results") / profile


def atomic_write_bytes(path: Path, payload: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=path.suffix)
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(payload)
            out.flush()
            os.fsync(out.fileno())
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def atomic_write_json(path: Path, payload: dict) -> None:
    atomic_write_bytes(path, (json.dumps(payload, indent=1, sort_keys=True) + "\n").encode())


def read_json(path: Path):
    """A stored JSON, or None when missing or corrupt (a corrupt one is reported)."""
    if not path.exists():
        return None
    try:
        return json.loads(path.read_text())
    except (ValueError, OSError) as error:
        log.warning("stored file %s is corrupt (%s)", path, error)
        print(f"warning: stored file {path} is corrupt ({error}); recomputing it")
        return None


# -- pretraining runs ---------------------------------------------------------------

def pretrain_path(store: Path, config) -> Path:
    return store / "pretrain" / f"{config_hash(config.to_dict())}.json"


def stored_pretrain(store: Path, config):
    """The stored pretraining result of ``config``, or None (missing, corrupt or stale)."""
    path = pretrain_path(store, config)
    result = read_json(path)
    if result is None:
        return None
    if result.get("config") != config.to_dict() or "metrics" not in result:
        print(f"warning: stored result {path} was made by another config; recomputing it")
        return None
    return result


def save_weights(path: Path, state_dict: dict, write: bool = True) -> dict:
    """Write float16 safetensors atomically (unless ``write`` is False); return the
    record the run's JSON keeps."""
    import torch
    from safetensors.torch import save

    tensors = {k: v.detach().to("cpu", torch.float16).contiguous()
               for k, v in state_dict.items()}
    payload = save(tensors, metadata={"dtype": WEIGHTS_DTYPE})
    if write:
        atomic_write_bytes(path, payload)
    return {"file": path.name, "sha256": hashlib.sha256(payload).hexdigest(),
            "bytes": len(payload), "dtype": WEIGHTS_DTYPE}


def load_weights(store: Path, result: dict) -> dict:
    """The float32 state dict of a stored run, after checking the file's SHA-256 against
    the one its JSON records; a missing or corrupt file raises WeightsError naming the
    file, both checksums and how to restore it. safetensors reads no pickle."""
    import torch
    from safetensors.torch import load

    record = result.get("weights")
    if not record:
        raise WeightsError(f"result {result.get('hash')} records no weights: retrain it "
                           f"with --fresh")
    path = store / "pretrain" / record["file"]
    fix = (f"restore it with `git checkout -- {path}` or retrain the run with --fresh")
    if not path.is_file() and result["config"]["max_steps"] == 0:
        payload = _initial_weights(result["config"])  # a control: rebuilt from its seed
    elif not path.is_file():
        raise WeightsError(f"weight file {path} is missing (expected sha256 "
                           f"{record['sha256']}); {fix}")
    else:
        payload = path.read_bytes()
    actual = hashlib.sha256(payload).hexdigest()
    if actual != record["sha256"] and not path.is_file():
        made_on = result.get("provenance", {}).get("machine", {}).get("cpu", "another CPU")
        raise WeightsError(
            f"control {result['hash']} rebuilt from its seed here has sha256 {actual}, "
            f"not the {record['sha256']} it recorded on {made_on}: initialization is not "
            f"bit-identical across CPU types (measured: every E = H = 64 control made on "
            f"an Intel Xeon differs on an AMD EPYC; the others match). Evaluate it where "
            f"it was made, or delete {store / 'pretrain' / (result['hash'] + '.json')} so "
            f"that the driver makes the control again here (its evaluations go with it)")
    if actual != record["sha256"]:
        raise WeightsError(f"weight file {path} is corrupt: sha256 {actual}, expected "
                           f"{record['sha256']}; {fix}")
    return {k: v.to(torch.float32) for k, v in load(payload).items()}


def _initial_weights(config: dict) -> bytes:
    """The float16 safetensors payload of a model at initialization (zero-step runs, the
    random-initialization controls, are not committed: their seed rebuilds them)."""
    import torch
    from safetensors.torch import save

    from ..model.config import ModelConfig
    from ..model.modeling import AlbertForPreTraining
    torch.manual_seed(config["seed"])
    model = AlbertForPreTraining(ModelConfig.from_dict(config["model"]))
    return save({k: v.detach().to(torch.float16).contiguous()
                 for k, v in model.state_dict().items()}, metadata={"dtype": WEIGHTS_DTYPE})


# -- evaluations --------------------------------------------------------------------

def eval_path(store: Path, pretrain_hash: str, eval_config) -> Path:
    return store / "eval" / config_hash(eval_config.to_dict()) / f"{pretrain_hash}.json"


def stored_eval(store: Path, pretrain_hash: str, eval_config):
    path = eval_path(store, pretrain_hash, eval_config)
    result = read_json(path)
    if result is None:
        return None
    if result.get("eval_config") != eval_config.to_dict() or "metrics" not in result:
        print(f"warning: stored evaluation {path} was made by another config; recomputing")
        return None
    return result
