"""Reference answers of 03_custom_functions: sigmoid and ReLU as `torch.autograd.Function`s.

Each Function is one node in the autograd graph: `forward` computes the output and saves what
`backward` needs; `backward` turns the gradient of the loss with respect to the output
(`grad_y`) into the gradient with respect to the input (a vector-Jacobian product; the
Jacobian of an elementwise function is diagonal, so it is an elementwise product).
"""

from __future__ import annotations

import torch


class Sigmoid(torch.autograd.Function):
    """y = 1 / (1 + exp(-x)), elementwise; saves its OUTPUT, since dy/dx = y * (1 - y)."""

    @staticmethod
    def forward(ctx, x: torch.Tensor) -> torch.Tensor:
        """x: any shape; returns y of the same shape and dtype."""
        y = 1.0 / (1.0 + torch.exp(-x))
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad_y: torch.Tensor) -> torch.Tensor:
        """grad_y: dL/dy, shape of y; returns dL/dx, shape of x."""
        (y,) = ctx.saved_tensors
        return grad_y * y * (1.0 - y)


class ReLU(torch.autograd.Function):
    """y = max(x, 0), elementwise; saves its INPUT, whose sign is the mask of the backward pass."""

    @staticmethod
    def forward(ctx, x: torch.Tensor) -> torch.Tensor:
        """x: any shape; returns y of the same shape and dtype."""
        ctx.save_for_backward(x)
        return x.clamp(min=0)

    @staticmethod
    def backward(ctx, grad_y: torch.Tensor) -> torch.Tensor:
        """grad_y: dL/dy, shape of y; returns dL/dx = grad_y where x > 0, else 0 (0 at x = 0, as torch.relu)."""
        (x,) = ctx.saved_tensors
        return grad_y * (x > 0).to(grad_y.dtype)


def sigmoid(x: torch.Tensor) -> torch.Tensor:
    """Sigmoid of x (any shape) through the custom Function: one `SigmoidBackward` node in the graph."""
    return Sigmoid.apply(x)


def relu(x: torch.Tensor) -> torch.Tensor:
    """ReLU of x (any shape) through the custom Function: one `ReLUBackward` node in the graph."""
    return ReLU.apply(x)
