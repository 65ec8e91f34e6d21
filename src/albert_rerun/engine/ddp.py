"""The pieces of DistributedDataParallel that one run's training loop uses
(``pretrain.run``): this rank's share of every global batch (``BatchShare``,
``batch_share``), the DDP-wrapped model (``wrap``) and the ranks' ``barrier``. Below
``pretrain``; ``distributed`` (the process group and the one-run command) sits above it.
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class BatchShare:
    """This rank's slice of every global batch, and the loss that makes DDP's averaged
    gradient the global batch's gradient."""

    rank: int
    world: int

    def slice(self, batch: dict) -> dict:
        size = len(batch["input_ids"]) // self.world
        return {k: v[self.rank * size:(self.rank + 1) * size] for k, v in batch.items()}

    def loss(self, out, local: dict, global_batch: dict):
        """This rank's loss, such that the mean over ranks is the global batch's loss:
        the MLM cross-entropy (a mean over this slice's masked tokens) weighted by the
        slice's share of the batch's masked tokens, times the world; the sentence-pair
        loss (a mean over equal slices) as it is."""
        masked = (local["mlm_labels"] != -100).sum()
        total = (global_batch["mlm_labels"] != -100).sum()
        loss = out.mlm_loss * (masked * self.world / total)
        return loss if out.sentence_loss is None else loss + out.sentence_loss

    def reduce(self, value):
        """The sum over ranks of a device tensor, in place (the ranks' loss shares)."""
        import torch.distributed as dist
        dist.all_reduce(value)
        return value


def batch_share(batch_size: int):
    """This process's BatchShare under an initialized process group of more than one
    rank, else None (a single-process run)."""
    import torch.distributed as dist
    if not (dist.is_available() and dist.is_initialized()) or dist.get_world_size() == 1:
        return None
    world = dist.get_world_size()
    if batch_size % world:
        raise ValueError(f"batch_size {batch_size} does not split over {world} ranks")
    return BatchShare(dist.get_rank(), world)


def wrap(model, device, sentence_loss: bool):
    """``model`` in DistributedDataParallel (its parameters broadcast from rank 0).
    Without a sentence-pair loss the pooler and the sentence head get no gradient (alone,
    their gradients stay None and the optimizer skips them): they are frozen, so that
    DDP waits for no gradient of theirs."""
    import torch
    from torch.nn.parallel import DistributedDataParallel
    if not sentence_loss:
        for module in (model.albert.pooler, model.sentence_head):
            module.requires_grad_(False)
    ids = [torch.cuda.current_device()] if device.type == "cuda" else None  # maybe_init's
    return DistributedDataParallel(model, device_ids=ids)


def barrier() -> None:
    """Wait for every rank (no-op without a process group)."""
    import torch.distributed as dist
    if dist.is_available() and dist.is_initialized():
        dist.barrier()
