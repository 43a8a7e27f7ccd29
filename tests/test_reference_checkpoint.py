"""05's checkpoint and resume: resuming from a checkpoint equals continuing, and each saved piece is needed.

The run is the notebook's: batch norm (buffers), dropout (torch's random state), Adam or SGD with momentum
(the optimizer's state), a StepLR scheduler, and a DataLoader shuffling with a generator of its own.
"""

from __future__ import annotations

import copy
import io

import pytest
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

from helpers.reference.optim import load_checkpoint, save_checkpoint


def _build(seed, generator_seed, x, y, adam=True):
    torch.manual_seed(seed)
    model = nn.Sequential(nn.Linear(4, 6), nn.BatchNorm1d(6), nn.Tanh(), nn.Dropout(0.3), nn.Linear(6, 2)).double()
    optimizer = (torch.optim.Adam(model.parameters(), lr=0.05) if adam
                 else torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9))
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=2, gamma=0.5)
    generator = torch.Generator().manual_seed(generator_seed)
    loader = DataLoader(TensorDataset(x, y), batch_size=4, shuffle=True, drop_last=True, generator=generator)
    return model, optimizer, scheduler, generator, loader


def _epochs(model, optimizer, scheduler, loader, epochs):
    for _ in range(epochs):
        model.train()
        for xb, yb in loader:
            optimizer.zero_grad()
            nn.functional.mse_loss(model(xb), yb).backward()
            optimizer.step()
        scheduler.step()


def _data():
    g = torch.Generator().manual_seed(0)
    return torch.randn(17, 4, generator=g, dtype=torch.float64), torch.randn(17, 2, generator=g, dtype=torch.float64)


def _resume(adam=True, drop=()):
    """The uninterrupted run's and the resumed run's final states; `drop` names checkpoint keys left out."""
    x, y = _data()
    model, optimizer, scheduler, generator, loader = _build(0, 10, x, y, adam)
    _epochs(model, optimizer, scheduler, loader, 3)  # odd: a StepLR(step_size=2) started again shows
    checkpoint = save_checkpoint(model, optimizer, 3, scheduler=scheduler, generator=generator)
    _epochs(model, optimizer, scheduler, loader, 3)  # written only now: it must not have followed
    buffer = io.BytesIO()
    torch.save({k: v for k, v in checkpoint.items() if k not in drop}, buffer)
    buffer.seek(0)
    saved = torch.load(buffer, weights_only=False)
    model2, optimizer2, scheduler2, generator2, loader2 = _build(1, 11, x, y, adam)
    if drop:  # the reference's load, but for what the checkpoint lacks
        model2.load_state_dict(saved["model"])
        optimizer2.load_state_dict(saved["optimizer"])
        for key, restore in (("scheduler", scheduler2.load_state_dict), ("generator", generator2.set_state),
                             ("rng", torch.set_rng_state)):
            if key in saved:
                restore(saved[key])
        step = saved["step"]
    else:
        step = load_checkpoint(model2, optimizer2, saved, scheduler=scheduler2, generator=generator2)
    _epochs(model2, optimizer2, scheduler2, loader2, 3)
    return step, model.state_dict(), model2.state_dict()


@pytest.mark.parametrize("adam", [True, False], ids=["adam", "momentum"])
def test_resuming_after_a_torch_save_round_trip_equals_continuing(adam):
    step, uninterrupted, resumed = _resume(adam)
    assert step == 3
    for name, value in uninterrupted.items():
        torch.testing.assert_close(resumed[name], value, rtol=0, atol=0)


@pytest.mark.parametrize("key", ["scheduler", "generator", "rng"])
def test_each_piece_of_the_checkpoint_is_needed(key):
    """Without the scheduler, the loader's generator or torch's random state (dropout), the runs part."""
    _, uninterrupted, resumed = _resume(drop=(key,))
    assert not all(torch.equal(resumed[name], value) for name, value in uninterrupted.items())


def test_the_oracle_tells_a_resume_without_the_optimizer_state_apart():
    """Only the model restored (Adam's moments start again from zero): the runs part."""
    x, y = _data()
    model, optimizer, scheduler, generator, loader = _build(0, 10, x, y)
    _epochs(model, optimizer, scheduler, loader, 2)
    states = copy.deepcopy(model.state_dict())
    _epochs(model, optimizer, scheduler, loader, 2)
    resumed = _build(1, 11, x, y)
    resumed[0].load_state_dict(states)
    _epochs(resumed[0], resumed[1], resumed[2], resumed[4], 2)
    assert not all(torch.equal(a, b) for a, b in zip(resumed[0].parameters(), model.parameters()))
