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


def conv_output_size(size: int, kernel: int, stride: int, padding: int) -> int:
    """Positions a kernel of `kernel` pixels takes along `size` pixels padded by `padding` on each side."""
    return (size + 2 * padding - kernel) // stride + 1


def conv2d_forward(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None = None,
                   stride: int = 1, padding: int = 0) -> torch.Tensor:
    """2-D convolution (cross-correlation, as F.conv2d) as one unfold and one matrix product.

    x: (N, C_in, H, W); weight: (C_out, C_in, kH, kW); bias: (C_out,) or None; returns
    (N, C_out, H_out, W_out) with H_out = (H + 2 padding - kH) // stride + 1 (W_out likewise).
    F.unfold lays every patch out as a column of length C_in*kH*kW, channel-major (the order of
    weight's last three dimensions), so the product with weight viewed as (C_out, C_in*kH*kW)
    computes every output pixel of every channel at once.
    """
    n, _, h, w = x.shape
    c_out, _, kh, kw = weight.shape
    h_out, w_out = conv_output_size(h, kh, stride, padding), conv_output_size(w, kw, stride, padding)
    cols = F.unfold(x, (kh, kw), padding=padding, stride=stride)  # (N, C_in*kH*kW, L)
    out = weight.reshape(c_out, -1) @ cols  # (N, C_out, L)
    if bias is not None:
        out = out + bias.reshape(1, c_out, 1)
    return out.reshape(n, c_out, h_out, w_out)


def conv2d_backward(grad_out: torch.Tensor, x: torch.Tensor, weight: torch.Tensor, stride: int = 1,
                    padding: int = 0) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """The gradients of conv2d_forward's output: (grad_x, grad_weight, grad_bias), shaped as x, weight, (C_out,).

    grad_out: (N, C_out, H_out, W_out). With cols = unfold(x) and out = W_mat @ cols:
    grad_W_mat = sum over the batch of grad_out_mat @ cols^T; grad_cols = W_mat^T @ grad_out_mat,
    folded back onto the image (F.fold, the adjoint of F.unfold, adds overlapping patches);
    grad_bias sums grad_out over the batch and every position.
    """
    n, c_out = grad_out.shape[:2]
    kh, kw = weight.shape[2:]
    cols = F.unfold(x, (kh, kw), padding=padding, stride=stride)  # (N, C_in*kH*kW, L)
    g = grad_out.reshape(n, c_out, -1)  # (N, C_out, L)
    grad_weight = (g @ cols.transpose(1, 2)).sum(0).reshape(weight.shape)
    grad_cols = weight.reshape(c_out, -1).T @ g  # (N, C_in*kH*kW, L)
    grad_x = F.fold(grad_cols, x.shape[2:], (kh, kw), padding=padding, stride=stride)
    return grad_x, grad_weight, grad_out.sum((0, 2, 3))


class DigitsCNN(nn.Module):
    """A small CNN for 8x8 digits: (N, 1, 8, 8) -> logits (N, 10).

    conv 3x3 (1 -> 16, padding 1), ReLU, 2x2 max-pool -> (16, 4, 4); conv 3x3 (16 -> 32,
    padding 1), ReLU, 2x2 max-pool -> (32, 2, 2); flatten (128); Linear(128, 10).
    """

    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(1, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        )
        self.classifier = nn.Linear(32 * 2 * 2, 10)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """x: (N, 1, 8, 8); returns logits (N, 10)."""
        return self.classifier(self.features(x).flatten(1))
