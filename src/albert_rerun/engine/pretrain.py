"""The pretraining engine: a PretrainConfig in, stored weights and a learning curve out.

The step stays on the device: segment pairs of a whole epoch sit there as tensors,
masks are drawn there in chunks of many steps at once (``data.device_masking``), every
shape is static (``max_predictions`` masked slots per sequence), the loss is read only
every ``LOG_EVERY`` steps and at curve points, and a GPU trains under bf16 autocast.
``compile=True`` runs the model through ``torch.compile``.

Every run is deterministic given its config and where it runs: the pairs of epoch e are
built with seed (seed, e), the masks of chunk c with (seed, c), dropout of step s with
(seed, s). A run killed at any point resumes from its last checkpoint and ends as the
uninterrupted run would.
"""
from __future__ import annotations

import json
import os
import threading
import time
from pathlib import Path

import numpy as np
import torch

from ..data.corpus import create_instances, tokenize_split
from ..data.device_masking import TokenTables, mask_tokens
from ..data.files import verify_inputs
from ..data.masking import MaskingConfig
from ..data.tokenizer import Tokenizer
from ..model.modeling import AlbertForPreTraining
from .config import PretrainConfig
from .ddp import barrier, batch_share, wrap
from .provenance import record
from .store import atomic_write_json, config_hash, pretrain_path, save_weights, stored_pretrain

LOG_EVERY = 50  # steps between reads of the training loss (each read waits for the device)
CHUNK_SEQUENCES = 1024  # sequences masked in one call (steps per chunk: this / batch)


def cpu_threads() -> int:
    """Threads for torch: the cores this process may use, or $ALBERT_RERUN_THREADS (set by
    the drivers when they run several single-threaded workers side by side)."""
    return int(os.environ.get("ALBERT_RERUN_THREADS") or 0) or max(1, len(os.sched_getaffinity(0)))


def resolve_device(device: str) -> torch.device:
    if device == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if device == "cuda" and not torch.cuda.is_available():
        raise ValueError("device 'cuda' asked for, but no CUDA device is available")
    return torch.device(device)


def autocast(device: torch.device):
    """bf16 autocast on a GPU (training, calibration and timings alike); fp32 on a CPU."""
    return torch.autocast(device.type, dtype=torch.bfloat16, enabled=device.type == "cuda")


def sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def learning_rate(config: PretrainConfig, step: int) -> float:
    """Linear warm-up, then linear decay to 0 at ``max_steps``."""
    if step < config.warmup_steps:
        return config.learning_rate * (step + 1) / config.warmup_steps
    progress = (step - config.warmup_steps) / max(1, config.max_steps - config.warmup_steps)
    return config.learning_rate * max(0.0, 1.0 - progress)


def make_optimizer(model: torch.nn.Module, config: PretrainConfig):
    """LayerNorm weights and biases get no weight decay (as the official LAMB)."""
    decay, no_decay = [], []
    for parameter in model.parameters():
        (no_decay if parameter.dim() < 2 else decay).append(parameter)
    groups = [{"params": decay, "weight_decay": config.weight_decay},
              {"params": no_decay, "weight_decay": 0.0}]
    if config.optimizer == "lamb":
        import warnings
        with warnings.catch_warnings():  # it imports tqdm.auto, which warns in kernels
            warnings.simplefilter("ignore")
            from pytorch_optimizer import Lamb
        return Lamb(groups, lr=config.learning_rate, betas=(0.9, 0.999), eps=1e-6,
                    max_grad_norm=0.0)
    fused = next(model.parameters()).device.type == "cuda"
    return torch.optim.AdamW(groups, lr=config.learning_rate, betas=(0.9, 0.999), eps=1e-6,
                             fused=fused or None)


# -- the data stream ------------------------------------------------------------------

class DeviceStream:
    """Masked batches for steps start, start + 1, ... as device tensors.

    Epoch e's segment pairs are built (numpy, one pass over the corpus) in a background
    thread while epoch e - 1 trains, then moved to the device whole. Masks are drawn for
    a chunk of steps at a time, seeded by the chunk, so resuming at any step redraws
    exactly the masks the uninterrupted run drew."""

    def __init__(self, config: PretrainConfig, tokenizer: Tokenizer, corpus, device,
                 start_step: int = 0):
        self.config, self.tokenizer, self.corpus, self.device = config, tokenizer, corpus, device
        self.tables = TokenTables.from_tokenizer(tokenizer, device)
        self.masking = MaskingConfig(max_predictions=config.max_predictions)
        self.chunk_steps = max(1, CHUNK_SEQUENCES // config.batch_size)
        self.epochs: dict = {}  # epoch -> (tensors, first step, steps)
        self._pending: dict = {}
        self.chunk = (None, None)
        self.generator = torch.Generator(device=device)
        # find the epoch of the first step of start_step's chunk, whose masks are drawn
        # together (a chunk may begin in the epoch before start_step's; epochs differ in
        # length)
        chunk_start = start_step - start_step % self.chunk_steps
        first, epoch = 0, 0
        while True:
            tensors, steps = self._epoch(epoch)
            if first + steps > chunk_start:
                break
            self.epochs.pop(epoch, None)
            first += steps
            epoch += 1
        self.epochs[epoch] = (tensors, first, steps)

    def _build(self, epoch: int):
        cycle = self.config.distinct_epochs
        source = epoch % cycle if cycle else epoch
        instances = create_instances(self.corpus, self.tokenizer, self.config.objective,
                                     self.config.max_seq_length,
                                     seed=self.config.seed * 1000 + source,
                                     sop_random_for_single=self.config.sop_random_for_single)
        order = np.random.default_rng([self.config.seed, epoch, 7]).permutation(len(instances))
        steps = len(instances) // self.config.batch_size
        if steps == 0:
            raise ValueError(f"the training corpus yields {len(instances)} segment pairs, "
                             f"fewer than one batch of {self.config.batch_size}")
        rows = order[:steps * self.config.batch_size]
        tensors = {"input_ids": torch.from_numpy(instances.input_ids[rows].astype(np.int64)),
                   "token_type_ids": torch.from_numpy(
                       instances.token_type_ids[rows].astype(np.int64)),
                   "lengths": torch.from_numpy(instances.lengths[rows].astype(np.int64)),
                   "sentence_labels": torch.from_numpy(instances.sentence_labels[rows])}
        return tensors, steps

    def _prefetch(self, epoch: int) -> None:
        box = {}
        thread = threading.Thread(target=lambda: box.update(value=self._build(epoch)),
                                  daemon=True)
        thread.start()
        self._pending[epoch] = (thread, box)

    def _epoch(self, epoch: int):
        if epoch in self._pending:
            thread, box = self._pending.pop(epoch)
            thread.join()
            if "value" not in box:
                raise RuntimeError(f"building the segment pairs of epoch {epoch} failed")
            tensors, steps = box["value"]
        else:
            tensors, steps = self._build(epoch)
        return {k: v.to(self.device) for k, v in tensors.items()}, steps

    def _rows(self, step: int):
        """(epoch tensors, slice) of one step's sequences."""
        epoch = max(e for e, (_, first, _) in self.epochs.items() if first <= step)
        tensors, first, steps = self.epochs[epoch]
        if step >= first + steps:  # the next epoch starts here
            tensors, next_steps = self._epoch(epoch + 1)
            self.epochs = {epoch + 1: (tensors, first + steps, next_steps)}
            return self._rows(step)
        k = step - first
        if k >= 0.8 * steps and epoch + 1 not in self._pending:  # build the next one
            self._prefetch(epoch + 1)
        B = self.config.batch_size
        return tensors, slice(k * B, (k + 1) * B)

    def _mask_chunk(self, chunk: int) -> dict:
        steps = range(chunk * self.chunk_steps, (chunk + 1) * self.chunk_steps)
        parts = [self._rows(step) for step in steps]
        joined = {k: torch.cat([tensors[k][rows] for tensors, rows in parts])
                  for k in parts[0][0]}
        self.generator.manual_seed(self.config.seed * 1_000_003 + chunk + 11)
        masked, positions, labels, _ = mask_tokens(joined["input_ids"], joined["lengths"],
                                                   self.tables, self.masking, self.generator)
        T = joined["input_ids"].shape[1]
        attention = (torch.arange(T, device=self.device)[None, :]
                     < joined["lengths"][:, None]).long()
        return {"input_ids": masked, "token_type_ids": joined["token_type_ids"],
                "attention_mask": attention, "mlm_positions": positions, "mlm_labels": labels,
                "sentence_labels": joined["sentence_labels"]}

    def batch(self, step: int) -> dict:
        chunk, offset = divmod(step, self.chunk_steps)
        if self.chunk[0] != chunk:
            self.chunk = (chunk, self._mask_chunk(chunk))
        B = self.config.batch_size
        return {k: v[offset * B:(offset + 1) * B] for k, v in self.chunk[1].items()}

    def close(self) -> None:
        for thread, _ in self._pending.values():
            thread.join()


# -- checkpoints -----------------------------------------------------------------------

class StoppedAtDeadline(RuntimeError):
    """A run stopped at its wall-clock deadline with a checkpoint written; the same call
    later resumes it from that step."""

    def __init__(self, step: int, steps: int):
        super().__init__(f"stopped at the deadline at step {step} of {steps}; the "
                         f"checkpoint resumes it")
        self.step, self.steps = step, steps


def _save_checkpoint(path: Path, model, optimizer, state: dict) -> None:
    payload = {"model": model.state_dict(), "optimizer": optimizer.state_dict(), **state}
    partial = path.with_suffix(".partial")
    torch.save(payload, partial)
    os.replace(partial, path)  # atomic
    # the step reached, readable without loading the checkpoint (the driver's budget
    # predicts a resumed run's time from its remaining steps)
    atomic_write_json(path.with_name("progress.json"), {"step": state["step"]})


def checkpoint_step(workdir: Path) -> int:
    """The step a run's checkpoint in ``workdir`` has reached (0 without one)."""
    try:
        return int(json.loads((workdir / "progress.json").read_text())["step"])
    except (OSError, ValueError, KeyError, TypeError):
        return 0


def _load_checkpoint(path: Path, model, optimizer):
    """The saved state, or None (with a warning) when absent or corrupt."""
    if not path.exists():
        return None
    try:
        payload = torch.load(path, weights_only=True, map_location="cpu")
        model.load_state_dict(payload["model"])
        optimizer.load_state_dict(payload["optimizer"])
        return {k: v for k, v in payload.items() if k not in ("model", "optimizer")}
    except Exception as error:
        print(f"warning: checkpoint {path} is corrupt ({error}); starting the run over")
        path.unlink(missing_ok=True)
        return None


# -- the run ---------------------------------------------------------------------------

def train_step(step_model, model, optimizer, config: PretrainConfig, batch: dict, step: int,
               device: torch.device, share=None) -> torch.Tensor:
    """One optimizer step of ``config``'s schedule on ``batch``; the loss, on the device
    (reading it would wait for the device). ``step_model`` is ``model`` or its compiled
    or DDP-wrapped form. ``share`` (a ``ddp.BatchShare``): train this rank's
    slice of the global ``batch``; the returned loss is this rank's share of the global
    batch's."""
    rank, world = (0, 1) if share is None else (share.rank, share.world)
    local = batch if share is None else share.slice(batch)
    for group in optimizer.param_groups:
        group["lr"] = learning_rate(config, step)
    torch.manual_seed((config.seed * 1_000_003 + step) * world + rank)  # dropout, by step
    sentence = config.objective != "none"
    with autocast(device):
        out = step_model(local["input_ids"], local["token_type_ids"], local["attention_mask"],
                         mlm_positions=local["mlm_positions"], mlm_labels=local["mlm_labels"],
                         sentence_labels=local["sentence_labels"] if sentence else None)
    loss = out.loss if share is None else share.loss(out, local, batch)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)
    return loss.detach() / world


def pretrain(config: PretrainConfig, workdir: Path, device: str = "auto",
             compile: bool = False, checkpoint_every: int = 500, quiet: bool = False,
             ddp: bool = False, stop_at: float | None = None) -> dict:
    """Train (or resume) one run in ``workdir``; return its metrics, curve and model.

    ``ddp``: under a process group of several ranks (``distributed.maybe_init``), train
    the run with DistributedDataParallel, each rank on its slice of every global batch;
    rank 0 writes the checkpoints. Without one, the single-process run.

    ``stop_at`` (a ``time.time()`` deadline): at the first loss read after it (every
    ``LOG_EVERY`` steps and at curve points), write a checkpoint and raise
    ``StoppedAtDeadline``; the next call resumes there and ends as the uninterrupted run
    would.

    The checkpoint carries, besides the training seconds (``metrics["train_seconds"]``),
    the wall-clock seconds of the calls that trained up to it (``wall_seconds``, from
    each call's start to its checkpoint; a checkpoint written before it was carried
    counts its training seconds). The result's ``earlier_wall_seconds`` is that of the
    checkpoint it resumed from (0 for a fresh run), for ``run`` to add to this call's;
    it is metadata only: nothing the run computes reads it."""
    import warnings
    with warnings.catch_warnings():  # tqdm.auto warns in kernels without ipywidgets
        warnings.simplefilter("ignore")
        from tqdm.auto import tqdm

    from .evaluate import mlm_set, score_mlm

    if ddp and stop_at is not None:  # ranks would read the clock at different times
        raise ValueError("stop_at is for single-process runs, not DDP")
    entered = time.time()  # this call's wall clock (the checkpoint's wall_seconds)
    target = resolve_device(device)
    torch.set_num_threads(cpu_threads())
    verify_inputs()  # every data file a run and its evaluation read, before step 0
    tokenizer = Tokenizer(vocab_size=config.vocab_size)
    if tokenizer.vocab_size != config.model.vocab_size:
        raise ValueError(f"model vocab_size {config.model.vocab_size} != tokenizer's "
                         f"{tokenizer.vocab_size}")
    torch.manual_seed(config.seed)
    model = AlbertForPreTraining(config.model).to(target)
    optimizer = make_optimizer(model, config)
    workdir.mkdir(parents=True, exist_ok=True)
    checkpoint = workdir / "checkpoint.pt"
    state = _load_checkpoint(checkpoint, model, optimizer) or {
        "step": 0, "seconds": 0.0, "tokens": 0, "curve": [], "loss_sum": 0.0,
        "loss_steps": 0, "wall_seconds": 0.0}
    # the wall seconds of the calls before this one (a checkpoint from before they were
    # carried: its training seconds, which those calls' wall clock covered)
    earlier_wall = float(state.setdefault("wall_seconds", state["seconds"]))
    if config.max_steps == 0:  # the initialized model
        return {"metrics": {"steps": 0, "tokens": 0, "train_seconds": 0.0},
                "curve": [], "model": model, "earlier_wall_seconds": 0.0}
    curve_set = mlm_set(config.max_seq_length, config.max_predictions,
                        config.curve_examples, config.vocab_size)
    corpus = tokenize_split("train", tokenizer).subset(config.train_documents)
    stream = DeviceStream(config, tokenizer, corpus, target, state["step"])
    share = batch_share(config.batch_size) if ddp else None
    step_model = model if share is None else wrap(model, target, config.objective != "none")
    step_model = torch.compile(step_model) if compile else step_model
    bar = tqdm(total=config.max_steps, initial=state["step"], disable=quiet,
               desc=f"{config.objective} H{config.model.hidden_size}", leave=False)
    loss_sum = torch.zeros((), device=target)
    tokens = torch.zeros((), dtype=torch.long, device=target)
    started = time.perf_counter()

    def settle():  # fold the device-side sums into the state; stop the clock
        nonlocal started, loss_sum, tokens
        if share is not None:  # every rank's share of the global loss
            share.reduce(loss_sum)
        sync(target)
        state["seconds"] += time.perf_counter() - started
        state["loss_sum"] += float(loss_sum)
        state["tokens"] += int(tokens)
        loss_sum.zero_()
        tokens.zero_()

    try:
        while state["step"] < config.max_steps:
            step = state["step"]
            batch = stream.batch(step)
            loss_sum += train_step(step_model, model, optimizer, config, batch, step, target,
                                   share)
            tokens += batch["attention_mask"].sum()  # the global batch's
            state["step"] = step + 1
            state["loss_steps"] += 1
            done = state["step"]
            curve_point = config.curve_every and done % config.curve_every == 0
            checkpoint_due = done % checkpoint_every == 0 and done < config.max_steps
            if (done % LOG_EVERY == 0 or curve_point or checkpoint_due
                    or done == config.max_steps):
                settle()
                mean = state["loss_sum"] / state["loss_steps"]
                if not np.isfinite(mean):  # NaN features would only fail later, obscurely
                    raise FloatingPointError(f"the run diverged by step {done}: training "
                                             f"loss {mean}; lower the learning rate")
                bar.update(done - bar.n)
                bar.set_postfix(loss=f"{mean:.2f}",
                                tok_s=f"{state['tokens'] / max(state['seconds'], 1e-9):,.0f}")
                if curve_point:
                    point = score_mlm(model, curve_set, target)
                    state["curve"].append({
                        "step": done, "seconds": state["seconds"], "tokens": state["tokens"],
                        "train_loss": mean, "examples": config.curve_examples,
                        **{k: v for k, v in point.items() if not k.startswith("sequence_")}})
                state["loss_sum"], state["loss_steps"] = 0.0, 0
                stopping = (stop_at is not None and done < config.max_steps
                             and time.time() >= stop_at)
                if (checkpoint_due or stopping) and (share is None or share.rank == 0):
                    state["wall_seconds"] = earlier_wall + time.time() - entered
                    _save_checkpoint(checkpoint, model, optimizer, state)
                if stopping:
                    raise StoppedAtDeadline(done, config.max_steps)
                started = time.perf_counter()
    finally:
        stream.close()
        bar.close()
    metrics = {"steps": state["step"], "train_seconds": state["seconds"],
               "tokens": state["tokens"],
               "tokens_per_second": state["tokens"] / max(state["seconds"], 1e-9),
               "step_seconds": state["seconds"] / max(1, state["step"])}
    return {"metrics": metrics, "curve": state["curve"], "model": model,
            "earlier_wall_seconds": earlier_wall}


def run(config: PretrainConfig, store: Path, device: str = "auto", compile: bool = False,
        quiet: bool = False, fresh: bool = False, ddp: bool = False,
        stop_at: float | None = None) -> dict:
    """The stored result of ``config`` under ``store``, training it if missing.

    Checkpoints every $ALBERT_RERUN_CHECKPOINT_EVERY steps (default 500; the torchrun
    tests set a few). ``ddp``: one run over the process group's ranks (``pretrain``);
    rank 0 stores the result, the others wait for it. ``stop_at``: see ``pretrain``
    (raises ``StoppedAtDeadline``, storing nothing but the checkpoint).

    The result's ``wall_seconds``: wall-clock seconds of the whole run, over every call
    that trained it (a run resumed from a checkpoint adds the seconds its earlier calls
    took up to that checkpoint, as ``metrics["train_seconds"]`` adds their training
    seconds), up to its result being stored; metadata, outside the metrics and the
    weights, so a resumed run's results stay those of the uninterrupted run."""
    fresh = fresh or os.environ.get("ALBERT_RERUN_FRESH") == "1"
    if not fresh:
        stored = stored_pretrain(store, config)
        if stored is not None:
            return stored
    name = config_hash(config.to_dict())
    workdir = store / "checkpoints" / name
    started = time.time()
    every = int(os.environ.get("ALBERT_RERUN_CHECKPOINT_EVERY") or 500)
    outcome = pretrain(config, workdir, device=device, compile=compile, quiet=quiet,
                       checkpoint_every=every, ddp=ddp, stop_at=stop_at)
    share = batch_share(config.batch_size) if ddp else None
    if share is not None and share.rank != 0:
        barrier()  # rank 0 stores the result
        return stored_pretrain(store, config)
    path = pretrain_path(store, config)
    # zero-step runs (the random-initialization controls) keep only their checksum: the
    # seed rebuilds them (store.load_weights), so they need no file in the repository
    weights = save_weights(path.with_suffix(".safetensors"), outcome["model"].state_dict(),
                           write=config.max_steps > 0)
    result = {"config": config.to_dict(), "hash": name, "metrics": outcome["metrics"],
              "curve": outcome["curve"], "weights": weights, "provenance": record(),
              "runtime": {"device": str(resolve_device(device)), "compile": compile,
                          "threads": torch.get_num_threads(),
                          **({} if share is None else {"ranks": share.world})},
              "wall_seconds": outcome["earlier_wall_seconds"] + time.time() - started}
    atomic_write_json(path, result)
    (workdir / "checkpoint.pt").unlink(missing_ok=True)
    (workdir / "progress.json").unlink(missing_ok=True)
    try:
        workdir.rmdir()
    except OSError:
        pass
    if share is not None:
        barrier()
    return result
