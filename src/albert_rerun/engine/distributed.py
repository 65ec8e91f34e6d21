"""torch.distributed through torchrun: run-level sharding and DDP.

``maybe_init`` starts a process group when torchrun launched this process (WORLD_SIZE >
1): NCCL where every rank has a GPU, gloo otherwise (the CPU tests use gloo).
"""
from __future__ import annotations

import contextlib
import os


@contextlib.contextmanager
def maybe_init():
    """A process group for the duration of the block, when under torchrun."""
    import torch
    import torch.distributed as dist
    world = int(os.environ.get("WORLD_SIZE", 1))
    if world <= 1 or dist.is_initialized():
        yield
        return
    backend = "nccl" if torch.cuda.is_available() else "gloo"
    if backend == "nccl":
        torch.cuda.set_device(int(os.environ.get("LOCAL_RANK", 0)))
    dist.init_process_group(backend)
    try:
        yield
    finally:
        dist.destroy_process_group()
