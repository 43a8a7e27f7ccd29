"""Reference answers of 04_nn_modules: models built from `torch.nn`, and SGD written by hand.

Conventions the notebook states and the tests rely on:
- `TwoLayerNet` and `ParallelBlock` keep their two layers as attributes `linear1` and `linear2`;
- `LinearRegression(d)` holds `nn.Parameter`s `w` of shape (1, d) and `b` of shape (1,), zeros;
- `train_manual_sgd` minimises the mean squared error, `F.mse_loss(model(x), y)` (mean over every
  element, as in the lectures), and returns the loss of each step before that step's update.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn


def build_sequential(d_in: int, h: int, d_out: int) -> nn.Sequential:
    """Linear(d_in, h) -> ReLU -> Linear(h, d_out); maps x: (N, d_in) to (N, d_out)."""
    return nn.Sequential(nn.Linear(d_in, h), nn.ReLU(), nn.Linear(h, d_out))


class TwoLayerNet(nn.Module):
    """The lectures' two-layer net as a Module: y_pred = linear2(relu(linear1(x)))."""

    def __init__(self, d_in: int, h: int, d_out: int):
        super().__init__()
        self.linear1 = nn.Linear(d_in, h)
        self.linear2 = nn.Linear(h, d_out)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """x: (N, d_in); returns y_pred: (N, d_out)."""
        h_relu = self.linear1(x).clamp(min=0)  # (N, h)
        return self.linear2(h_relu)  # (N, d_out)


class ParallelBlock(nn.Module):
    """Two linear maps of the same input, multiplied elementwise, then ReLU: (l1(x) * l2(x)).clamp(min=0)."""

    def __init__(self, d_in: int, d_out: int):
        super().__init__()
        self.linear1 = nn.Linear(d_in, d_out)
        self.linear2 = nn.Linear(d_in, d_out)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """x: (N, d_in); returns (N, d_out), every entry >= 0."""
        h1 = self.linear1(x)  # (N, d_out)
        h2 = self.linear2(x)  # (N, d_out)
        return (h1 * h2).clamp(min=0)


class LinearRegression(nn.Module):
    """y_pred = x w^T + b with parameters w: (1, d) and b: (1,), both starting at zero."""

    def __init__(self, d: int):
        super().__init__()
        self.w = nn.Parameter(torch.zeros(1, d))
        self.b = nn.Parameter(torch.zeros(1))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """x: (N, d); returns y_pred: (N, 1)."""
        return x @ self.w.T + self.b


def count_parameters(model: nn.Module) -> int:
    """Number of trainable scalars: elements of the parameters with requires_grad (frozen ones and buffers excluded)."""
    return sum(p.numel() for p in model.parameters() if p.requires_grad)


def train_manual_sgd(model: nn.Module, x: torch.Tensor, y: torch.Tensor, learning_rate: float,
                     steps: int) -> list[float]:
    """Plain gradient descent on F.mse_loss(model(x), y), updating `model` in place.

    x: (N, ...) inputs, y: targets shaped like model(x). Each step: forward, loss, zero the old
    gradients, backward, then `p -= learning_rate * p.grad` under `torch.no_grad()` for every
    parameter that has a gradient (frozen parameters stay as they are). Returns the `steps`
    losses as Python floats, each measured before that step's update.
    """
    losses = []
    for _ in range(steps):
        loss = F.mse_loss(model(x), y)
        model.zero_grad()
        loss.backward()
        with torch.no_grad():
            for p in model.parameters():
                if p.grad is not None:
                    p -= learning_rate * p.grad
        losses.append(loss.item())
    return losses
