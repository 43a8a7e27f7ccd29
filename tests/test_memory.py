"""helpers.memory.LiveTensors: the bytes operators allocate, counted while alive, views and inputs not."""

from __future__ import annotations

import torch
from torch import nn

from helpers.memory import LiveTensors


def test_new_storages_count_until_freed_and_views_never():
    x = torch.randn(100, 10)  # made before: not counted
    with LiveTensors() as memory:
        y = x * 2  # 4,000 bytes
        view = y.t()  # the same storage
        y.add_(1)  # in place: the same storage
        assert memory.now == 4000
        z = torch.ones(50, dtype=torch.float64)  # 400 bytes
        assert (memory.now, memory.peak) == (4400, 4400)
        del y, view
        assert memory.now == 400
        del z
    assert (memory.now, memory.peak, memory.allocated) == (0, 4400, 4400)


def test_a_forward_keeps_what_backward_needs_and_backward_frees_it():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 4))
    x = torch.randn(32, 8)
    with LiveTensors() as memory:
        out = model(x)
        # ReLU's output (32 x 16, kept by ReLU and by the second Linear) and the output itself: the first
        # Linear's output is freed, since ReLU needs only its own output
        assert memory.now == 32 * 16 * 4 + 32 * 4 * 4
        out.sum().backward()
        del out
    assert memory.now == sum(p.numel() * 4 for p in model.parameters())  # what is left: the .grad tensors
