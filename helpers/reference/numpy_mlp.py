"""Reference answers of 01_numpy_mlp: the lectures' two-layer ReLU net, forward and backward by hand.

The net is bias-free: y_pred = relu(x @ w1) @ w2, trained on the sum of squared errors.
Shapes use the lectures' names: x (N, D_in), w1 (D_in, H), w2 (H, D_out), y (N, D_out); x and y may carry
more leading dimensions, (..., D_in) and (..., D_out): a batch of sequences (B, T, D_in).
NumPy only: the point of 01 is to see every gradient that autograd will later compute for us.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np


def relu(h: np.ndarray) -> np.ndarray:
    """max(h, 0) elementwise, as a new array of h's shape and dtype; h itself is left unchanged."""
    return np.maximum(h, 0)


def mlp_forward(x: np.ndarray, w1: np.ndarray, w2: np.ndarray) -> tuple[np.ndarray, tuple]:
    """Forward pass of relu(x @ w1) @ w2.

    x: (..., D_in), w1: (D_in, H), w2: (H, D_out).
    Returns y_pred: (..., D_out) and cache = (h, h_relu, y_pred) with h = x @ w1: (..., H) the
    pre-activation and h_relu = relu(h): (..., H), everything `mlp_backward` needs.
    """
    h = x @ w1  # (..., H)
    h_relu = relu(h)  # (..., H)
    y_pred = h_relu @ w2  # (..., D_out)
    return y_pred, (h, h_relu, y_pred)


def l2_loss(y_pred: np.ndarray, y: np.ndarray) -> float:
    """Sum of squared errors over every element: y_pred, y: (N, D_out); returns a float."""
    return float(np.sum((y_pred - y) ** 2))


def mlp_backward(x: np.ndarray, y: np.ndarray, w1: np.ndarray, w2: np.ndarray,
                 cache: tuple) -> tuple[np.ndarray, np.ndarray]:
    """Gradients of l2_loss(mlp_forward(x, w1, w2)[0], y) with respect to w1 and w2.

    x: (..., D_in), y: (..., D_out) with the same leading dimensions, w1: (D_in, H), w2: (H, D_out),
    cache = (h, h_relu, y_pred) from `mlp_forward`. Returns grad_w1: (D_in, H) and grad_w2: (H, D_out).
    A weight entry reaches every position of every leading index, so the chain rule sums over all of
    them: each is one more row of the product (the batch's gradient is the sum of its pieces').
    """
    h, h_relu, y_pred = cache
    rows = int(np.prod(x.shape[:-1]))
    grad_y_pred = 2.0 * (y_pred - y)  # (..., D_out)
    grad_h_relu = grad_y_pred @ w2.T  # (..., D_out) @ (D_out, H) = (..., H)
    grad_h = grad_h_relu * (h > 0)  # ReLU passes the gradient only where its input was positive
    grad_w2 = h_relu.reshape(rows, -1).T @ grad_y_pred.reshape(rows, -1)  # (H, rows) @ (rows, D_out)
    grad_w1 = x.reshape(rows, -1).T @ grad_h.reshape(rows, -1)  # (D_in, rows) @ (rows, H)
    return grad_w1, grad_w2


def numeric_gradient(f: Callable[[np.ndarray], float], w: np.ndarray, eps: float = 1e-5) -> np.ndarray:
    """Centered-difference gradient of the scalar function f at w: error O(eps**2).

    w: any shape; f(w) returns a scalar. Returns a float64 array of w's shape whose entry i is
    (f(w + eps e_i) - f(w - eps e_i)) / (2 eps): the f'' terms of Taylor's expansions at the two points
    cancel. Works on a float64 copy, so the caller's w is never changed, and calls f 2 * w.size times.
    """
    w = np.array(w, dtype=np.float64)  # a copy we may perturb
    grad = np.zeros_like(w)
    for index in np.ndindex(w.shape):
        original = w[index]
        w[index] = original + eps
        f_plus = float(f(w))
        w[index] = original - eps
        f_minus = float(f(w))
        w[index] = original  # restore exactly, not by adding eps back
        grad[index] = (f_plus - f_minus) / (2 * eps)
    return grad


def relative_error(a: np.ndarray, b: np.ndarray) -> float:
    """max over elements of |a - b| / max(1e-8, |a| + |b|): 0 when equal, about 1 when unrelated.

    a, b: arrays of the same shape (or scalars). The 1e-8 floor keeps 0 / 0 at 0.
    """
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    return float(np.max(np.abs(a - b) / np.maximum(1e-8, np.abs(a) + np.abs(b))))


def train_numpy_mlp(x: np.ndarray, y: np.ndarray, w1: np.ndarray, w2: np.ndarray,
                    learning_rate: float, steps: int) -> tuple[np.ndarray, np.ndarray, list[float]]:
    """Full-batch gradient descent on l2_loss for `steps` steps.

    x: (N, D_in), y: (N, D_out), w1: (D_in, H), w2: (H, D_out). Returns the trained
    w1: (D_in, H), w2: (H, D_out) as new arrays (the caller's w1 and w2 are not modified) and
    losses: a list of `steps` floats, losses[t] being the loss of the weights before update t.
    """
    w1, w2 = w1.copy(), w2.copy()  # the caller's arrays stay as they were, even for steps=0
    losses = []
    for _ in range(steps):
        y_pred, cache = mlp_forward(x, w1, w2)
        losses.append(l2_loss(y_pred, y))
        grad_w1, grad_w2 = mlp_backward(x, y, w1, w2, cache)
        w1 = w1 - learning_rate * grad_w1
        w2 = w2 - learning_rate * grad_w2
    return w1, w2, losses
