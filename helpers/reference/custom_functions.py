"""Reference answers of 03_custom_functions: sigmoid, ReLU, linear and log-softmax as autograd Functions.

Each Function is one node in the autograd graph: `forward` computes the output and saves what
`backward` needs; `backward` turns the gradient of the loss with respect to the output
(`grad_y`) into the gradient with respect to the input (a vector-Jacobian product; the
Jacobian of an elementwise function is diagonal, so it is an elementwise product). `Linear` has
several inputs and a backward that mixes elements (matrix products, a sum over the batch), and
computes only the gradients that `ctx.needs_input_grad` asks for.
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


class Linear(torch.autograd.Function):
    """y = x @ w.T + b; saves x and w; backward computes only the gradients ctx.needs_input_grad asks for."""

    @staticmethod
    def forward(ctx, x: torch.Tensor, w: torch.Tensor, b: torch.Tensor | None = None) -> torch.Tensor:
        """x: (N, D_in), w: (D_out, D_in), b: (D_out,) or None; returns y: (N, D_out)."""
        ctx.save_for_backward(x, w)
        y = x.mm(w.t())  # (N, D_out)
        return y if b is None else y + b

    @staticmethod
    def backward(ctx, grad_y: torch.Tensor):
        """grad_y: dL/dy, (N, D_out); returns (dL/dx (N, D_in), dL/dw (D_out, D_in), dL/db (D_out,)),
        None in each place whose input needs no gradient (b=None included)."""
        x, w = ctx.saved_tensors
        needs_x, needs_w, needs_b = ctx.needs_input_grad
        grad_x = grad_y.mm(w) if needs_x else None  # (N, D_out) @ (D_out, D_in)
        grad_w = grad_y.t().mm(x) if needs_w else None  # (D_out, N) @ (N, D_in)
        grad_b = grad_y.sum(0) if needs_b else None  # b is added to every row of y
        return grad_x, grad_w, grad_b


def linear(x: torch.Tensor, w: torch.Tensor, b: torch.Tensor | None = None) -> torch.Tensor:
    """x @ w.T + b through the custom Function (x: (N, D_in), w: (D_out, D_in), b: (D_out,) or None):
    one `LinearBackward` node in the graph."""
    return Linear.apply(x, w, b)


class LogSoftmax(torch.autograd.Function):
    """y = log(softmax(x)) over the last dimension, shifted by each row's maximum so that exp never
    overflows; saves its OUTPUT, since softmax = exp(y) is all backward needs."""

    @staticmethod
    def forward(ctx, x: torch.Tensor) -> torch.Tensor:
        """x: (..., C) scores; returns y of the same shape and dtype."""
        shifted = x - x.amax(dim=-1, keepdim=True)  # every exponent <= 0, the largest term exactly 1
        y = shifted - shifted.exp().sum(dim=-1, keepdim=True).log()
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad_y: torch.Tensor) -> torch.Tensor:
        """grad_y: dL/dy, shape of y; returns dL/dx = grad_y - softmax * (grad_y summed over the row)."""
        (y,) = ctx.saved_tensors
        return grad_y - y.exp() * grad_y.sum(dim=-1, keepdim=True)


def log_softmax(x: torch.Tensor) -> torch.Tensor:
    """log(softmax(x)) over the last dimension through the custom Function: one `LogSoftmaxBackward` node."""
    return LogSoftmax.apply(x)
