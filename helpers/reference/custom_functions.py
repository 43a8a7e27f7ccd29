"""Reference answers of 03_custom_functions: sigmoid, ReLU, linear and log-softmax as autograd Functions.

Each Function is one node in the autograd graph: `forward` computes the output and saves what
`backward` needs; `backward` turns the gradient of the loss with respect to the output
(`grad_y`) into the gradient with respect to the input (a vector-Jacobian product; the
Jacobian of an elementwise function is diagonal, so it is an elementwise product). `Linear` has
several inputs and a backward that mixes elements (matrix products, a sum over the batch), and
computes only the gradients that `ctx.needs_input_grad` asks for. `LayerNorm` is a Function whose
backward mixes every entry of a row (the paths through the row's mean and variance); `BatchNorm` the same along
the batch, per channel, with the running statistics nn.BatchNorm keeps. `Value` and
`backward` are a tiny reverse-mode engine on NumPy arrays: each op's vector-Jacobian product, added
into its parents' gradients, run in reverse topological order.
"""

from __future__ import annotations

import numpy as np
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


class LayerNorm(torch.autograd.Function):
    """Layer normalization over the last dimension, y = gamma * (x - mean) / sqrt(var + eps) + beta, with the
    biased variance (divided by D); saves x_hat and 1 / sqrt(var + eps) (and gamma) for backward."""

    @staticmethod
    def forward(ctx, x: torch.Tensor, gamma: torch.Tensor, beta: torch.Tensor, eps: float = 1e-5) -> torch.Tensor:
        """x: (..., D), gamma and beta: (D,), eps a float; returns y: (..., D)."""
        mean = x.mean(dim=-1, keepdim=True)  # (..., 1)
        centered = x - mean
        var = (centered * centered).mean(dim=-1, keepdim=True)  # biased: divided by D
        rstd = 1.0 / torch.sqrt(var + eps)  # (..., 1)
        x_hat = centered * rstd  # (..., D)
        ctx.save_for_backward(x_hat, rstd, gamma)
        return gamma * x_hat + beta

    @staticmethod
    def backward(ctx, grad_y: torch.Tensor):
        """grad_y: (..., D); returns (dL/dx (..., D), dL/dgamma (D,), dL/dbeta (D,), None for eps).

        With g = gamma * grad_y, per row: dL/dx = rstd * (g - mean(g) - x_hat * mean(g * x_hat));
        the two means are the paths through the row's mean and through its variance."""
        x_hat, rstd, gamma = ctx.saved_tensors
        d = grad_y.shape[-1]  # gamma and beta are shared by every row, however many leading dimensions (none too)
        grad_gamma = (grad_y * x_hat).reshape(-1, d).sum(dim=0)
        grad_beta = grad_y.reshape(-1, d).sum(dim=0)
        g = grad_y * gamma
        grad_x = rstd * (g - g.mean(dim=-1, keepdim=True) - x_hat * (g * x_hat).mean(dim=-1, keepdim=True))
        return grad_x, grad_gamma, grad_beta, None


class BatchNorm(torch.autograd.Function):
    """Batch normalization in training mode, y = gamma * (x - mean) / sqrt(var + eps) + beta with each channel's
    statistics over the batch (and every position of an image or a sequence); the biased variance normalizes.
    The running statistics handed in, when given, are updated in place as nn.BatchNorm's are: an exponential
    average (weight `momentum` on the batch) of the batch's mean and of its unbiased variance (an estimate of the
    population's). Saves x_hat, 1 / sqrt(var + eps) and gamma for backward."""

    @staticmethod
    def forward(ctx, x: torch.Tensor, gamma: torch.Tensor, beta: torch.Tensor, running_mean: torch.Tensor | None = None,
                running_var: torch.Tensor | None = None, momentum: float = 0.1, eps: float = 1e-5) -> torch.Tensor:
        """x: (N, C) or (N, C, ...); gamma, beta, running_mean, running_var: (C,); returns y: x's shape."""
        dims = [0, *range(2, x.dim())]  # every dimension but the channels'
        per_channel = [1, -1] + [1] * (x.dim() - 2)  # a (C,) vector against x
        m = x.numel() // x.shape[1]  # values behind each channel's statistics
        mean = x.mean(dim=dims, keepdim=True)
        centered = x - mean
        var = (centered * centered).mean(dim=dims, keepdim=True)  # biased: divided by m
        rstd = 1.0 / torch.sqrt(var + eps)
        x_hat = centered * rstd
        if running_mean is not None:
            running_mean.mul_(1 - momentum).add_(momentum * mean.reshape(-1))
        if running_var is not None:
            running_var.mul_(1 - momentum).add_(momentum * m / (m - 1) * var.reshape(-1))  # unbiased
        ctx.save_for_backward(x_hat, rstd, gamma)
        return gamma.reshape(per_channel) * x_hat + beta.reshape(per_channel)

    @staticmethod
    def backward(ctx, grad_y: torch.Tensor):
        """grad_y: x's shape; returns (dL/dx, dL/dgamma (C,), dL/dbeta (C,), and None for the running statistics,
        momentum and eps).

        With g = gamma * grad_y, per channel: dL/dx = rstd * (g - mean(g) - x_hat * mean(g * x_hat)), the means
        over the batch and the positions: layer norm's backward along the other axes."""
        x_hat, rstd, gamma = ctx.saved_tensors
        dims = [0, *range(2, grad_y.dim())]
        g = grad_y * gamma.reshape([1, -1] + [1] * (grad_y.dim() - 2))
        grad_x = rstd * (g - g.mean(dim=dims, keepdim=True) - x_hat * (g * x_hat).mean(dim=dims, keepdim=True))
        return grad_x, (grad_y * x_hat).sum(dim=dims), grad_y.sum(dim=dims), None, None, None, None


def unbroadcast(grad: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """The gradient of a broadcast result summed back to `shape`, the shape of the input that NumPy broadcast:
    over the leading dimensions broadcasting added, and over every dimension of size 1 that it stretched."""
    grad = np.asarray(grad)
    while grad.ndim > len(shape):
        grad = grad.sum(axis=0)
    for axis, size in enumerate(shape):
        if size == 1 and grad.shape[axis] != 1:
            grad = grad.sum(axis=axis, keepdims=True)
    return grad


class Value:
    """A node of a tiny reverse-mode engine (micrograd's idea, on NumPy arrays): `data` (float64 array),
    `grad` (same shape, zeros at first), `parents` (the Values it was computed from) and `_backward`, which
    ADDS the vector-Jacobian product of this node's grad into each parent's grad."""

    def __init__(self, data, parents=()):
        self.data = np.asarray(data, dtype=np.float64)
        self.grad = np.zeros_like(self.data)
        self.parents = tuple(parents)
        self._backward = lambda: None

    unbroadcast = staticmethod(unbroadcast)

    def __add__(self, other):
        """self + other, with NumPy broadcasting."""
        other = other if isinstance(other, Value) else Value(other)
        out = Value(self.data + other.data, (self, other))

        def _backward():
            self.grad += unbroadcast(out.grad, self.data.shape)
            other.grad += unbroadcast(out.grad, other.data.shape)

        out._backward = _backward
        return out

    def __mul__(self, other):
        """self * other, elementwise, with NumPy broadcasting."""
        other = other if isinstance(other, Value) else Value(other)
        out = Value(self.data * other.data, (self, other))

        def _backward():
            self.grad += unbroadcast(out.grad * other.data, self.data.shape)
            other.grad += unbroadcast(out.grad * self.data, other.data.shape)

        out._backward = _backward
        return out

    def __matmul__(self, other):
        """self @ other, both 2-D: (N, K) @ (K, M) -> (N, M)."""
        out = Value(self.data @ other.data, (self, other))

        def _backward():
            self.grad += out.grad @ other.data.T  # (N, M) @ (M, K)
            other.grad += self.data.T @ out.grad  # (K, N) @ (N, M)

        out._backward = _backward
        return out

    def relu(self):
        """max(self, 0), elementwise."""
        out = Value(np.maximum(self.data, 0.0), (self,))

        def _backward():
            self.grad += out.grad * (self.data > 0)

        out._backward = _backward
        return out

    def sum(self):
        """The sum of every entry: a 0-d Value."""
        out = Value(self.data.sum(), (self,))

        def _backward():
            self.grad += np.broadcast_to(out.grad, self.data.shape)

        out._backward = _backward
        return out

    def __neg__(self):
        return self * -1.0

    def __sub__(self, other):
        return self + (-other if isinstance(other, Value) else Value(-np.asarray(other, dtype=np.float64)))

    def __radd__(self, other):
        return self + other

    def __rmul__(self, other):
        return self * other


def backward(root) -> None:
    """Reverse-mode sweep from `root`: root.grad = ones, then every node's _backward once, each after all the
    nodes that use it (reverse topological order: a depth-first post-order visits each node once)."""
    order, seen, stack = [], set(), [(root, False)]
    while stack:  # iterative post-order: a deep graph does not hit Python's recursion limit
        node, expanded = stack.pop()
        if expanded:
            order.append(node)
            continue
        if id(node) in seen:
            continue
        seen.add(id(node))
        stack.append((node, True))
        stack.extend((parent, False) for parent in node.parents if id(parent) not in seen)
    root.grad = np.ones_like(root.data)
    for node in reversed(order):
        node._backward()
