"""05's checkpoint and resume: resuming from a checkpoint equals continuing, and each saved piece is needed."""

from __future__ import annotations

import copy
import io

import pytest
import torch
from torch import nn

from helpers.reference.optim import load_checkpoint, save_checkpoint


def _run(model, optimizer, steps, x, y):
    for _ in range(steps):
        optimizer.zero_grad()
        nn.functional.mse_loss(model(x), y).backward()
        optimizer.step()


def _net(seed):
    torch.manual_seed(seed)
    return nn.Sequential(nn.Linear(4, 6), nn.Tanh(), nn.Linear(6, 2)).double()


@pytest.mark.parametrize("make", [lambda p: torch.optim.Adam(p, lr=0.05), lambda p: torch.optim.SGD(p, lr=0.05, momentum=0.9)],
                         ids=["adam", "momentum"])
def test_resuming_after_a_torch_save_round_trip_equals_continuing(make):
    x, y = torch.randn(10, 4, dtype=torch.float64), torch.randn(10, 2, dtype=torch.float64)
    model = _net(0)
    optimizer = make(model.parameters())
    _run(model, optimizer, 3, x, y)
    checkpoint = save_checkpoint(model, optimizer, 3)
    _run(model, optimizer, 4, x, y)  # the checkpoint is written only now: it must not have followed
    buffer = io.BytesIO()
    torch.save(checkpoint, buffer)
    buffer.seek(0)
    resumed = _net(1)
    resumed_optimizer = make(resumed.parameters())
    assert load_checkpoint(resumed, resumed_optimizer, torch.load(buffer, weights_only=False)) == 3
    _run(resumed, resumed_optimizer, 4, x, y)
    for mine, theirs in zip(resumed.parameters(), model.parameters()):
        torch.testing.assert_close(mine, theirs, rtol=0, atol=0)


def test_the_oracle_tells_a_resume_without_the_optimizer_state_apart():
    """Only the model restored (Adam's moments start again from zero): the runs part."""
    x, y = torch.randn(10, 4, dtype=torch.float64), torch.randn(10, 2, dtype=torch.float64)
    model = _net(0)
    optimizer = torch.optim.Adam(model.parameters(), lr=0.05)
    _run(model, optimizer, 3, x, y)
    states = copy.deepcopy(model.state_dict())
    _run(model, optimizer, 4, x, y)
    resumed = _net(1)
    resumed.load_state_dict(states)
    _run(resumed, torch.optim.Adam(resumed.parameters(), lr=0.05), 4, x, y)
    assert not all(torch.equal(a, b) for a, b in zip(resumed.parameters(), model.parameters()))
