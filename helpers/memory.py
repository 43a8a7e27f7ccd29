"""The memory a computation keeps, measured on any device (nothing here is graded).

On a GPU, `torch.cuda.memory_allocated()` and `torch.cuda.max_memory_allocated()` count the bytes
the caching allocator has handed out. A CPU has no such counters, so `LiveTensors` counts what the
operators themselves make: while it is active, every tensor storage that an operator allocates
(forward, backward, and the recomputation of a checkpointed segment alike) is counted from the
moment it is made until the last tensor that uses it is freed. A view or an in-place result shares
its input's storage and is not counted again; tensors made before (the parameters, the input) are
not counted at all.

    with LiveTensors() as memory:
        loss = model(x).sum()
        kept = memory.now      # bytes the forward pass keeps for backward (and its output)
        loss.backward()
    memory.peak                # the most that was alive at once

The numbers are exact and the same on every run: they count bytes, not time.
"""

from __future__ import annotations

import weakref

import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_leaves


class LiveTensors(TorchDispatchMode):
    """Counts the bytes of the tensor storages that operators allocate while it is active.

    `now`: bytes alive now; `peak`: the most alive at once since it started; `allocated`: every byte
    allocated, freed or not. Each storage is counted once, from its first operator to its release.
    """

    def __init__(self):
        super().__init__()
        self.now = self.peak = self.allocated = 0
        self._alive: dict[int, int] = {}

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        inputs = {id(t.untyped_storage()) for t in tree_leaves((args, kwargs)) if isinstance(t, torch.Tensor)}
        for tensor in tree_leaves(out):
            if isinstance(tensor, torch.Tensor) and tensor.device.type != "meta":
                storage = tensor.untyped_storage()
                key = id(storage)
                if key not in inputs and key not in self._alive:  # a view or an in-place result: not new
                    self._count(storage, key)
        return out

    def _count(self, storage, key: int) -> None:
        size = storage.nbytes()
        self._alive[key] = size
        self.now += size
        self.allocated += size
        self.peak = max(self.peak, self.now)
        weakref.finalize(storage, self._release, key)  # PyTorch keeps one Python object per live storage

    def _release(self, key: int) -> None:
        self.now -= self._alive.pop(key, 0)
