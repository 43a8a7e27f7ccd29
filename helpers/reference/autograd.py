"""Reference answers of 02_autograd: the two-layer net of 01 with PyTorch tensors and autograd.

Shapes use the lectures' names: x (N, D_in), w1 (D_in, H), w2 (H, D_out), y (N, D_out).
The `answer_*` values are the answers to the notebook's questions about the lecture's linear regression
graph (seed 000: x, y data; w, b parameters; prediction = x @ w.T + b; loss = mean((prediction - y) ** 2)).
"""

from __future__ import annotations

from collections import deque

import numpy as np
import torch

# -- tensors: broadcasting, indexing, views --------------------------------------------------------

def pairwise_sq_distances(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """Squared Euclidean distances between the rows of a (n, d) and of b (m, d): out[i, j] = |a_i - b_j|^2.

    Returns (n, m), in the inputs' dtype, without a Python loop and without a tensor of n * m * d numbers:
    |a_i|^2 - 2 a_i . b_j + |b_j|^2, each term at most (n, m). Clamped at 0, where rounding of the large, nearly
    equal terms would make a true 0 negative. Differentiable with respect to a and b.
    """
    a_sq = (a * a).sum(dim=1, keepdim=True)  # (n, 1)
    b_sq = (b * b).sum(dim=1)  # (m,)
    return (a_sq - 2 * (a @ b.T) + b_sq).clamp(min=0)


def label_scores(scores: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
    """Each row's score for its own label: scores (n, c), labels (n,) int64 in [0, c) -> (n,)."""
    return scores[torch.arange(scores.shape[0], device=scores.device), labels]


def pixels_as_rows(images: torch.Tensor, patch: int = 1) -> torch.Tensor:
    """(N, C, H, W) -> (N, (H // p) * (W // p), C * p * p) for p = patch (H and W multiples of p): row k of image n
    holds patch (k // (W // p), k % (W // p)), channel by channel, then row by row, then column by column (the
    order of F.unfold(images, p, stride=p)). patch=1: row k holds the C channel values of pixel (k // W, k % W)."""
    n, c, h, w = images.shape
    p = patch
    blocks = images.reshape(n, c, h // p, p, w // p, p)  # each side split into (which patch, where in it)
    return blocks.permute(0, 2, 4, 1, 3, 5).reshape(n, (h // p) * (w // p), c * p * p)


def torch_mlp_forward(x: torch.Tensor, w1: torch.Tensor, w2: torch.Tensor) -> torch.Tensor:
    """relu(x @ w1) @ w2 with torch operations, recorded by autograd when w1 or w2 requires grad.

    x: (N, D_in), w1: (D_in, H), w2: (H, D_out), on one device with one dtype. Returns y_pred: (N, D_out).
    """
    return x.mm(w1).clamp(min=0).mm(w2)


def autograd_gradients(x: torch.Tensor, y: torch.Tensor, w1: torch.Tensor,
                       w2: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Gradients of sum((torch_mlp_forward(x, w1, w2) - y) ** 2) with respect to w1 and w2, by loss.backward().

    x: (N, D_in), y: (N, D_out); w1: (D_in, H) and w2: (H, D_out) are leaves with requires_grad=True.
    Returns (grad_w1, grad_w2) of shapes (D_in, H) and (H, D_out): the gradients of this loss alone,
    whatever w1.grad and w2.grad held before. On return w1.grad and w2.grad are None.
    """
    w1.grad = None  # backward() adds to .grad: start from nothing
    w2.grad = None
    loss = ((torch_mlp_forward(x, w1, w2) - y) ** 2).sum()
    loss.backward()
    grad_w1, grad_w2 = w1.grad, w2.grad
    w1.grad = None  # hand the gradients over and leave nothing behind to accumulate
    w2.grad = None
    return grad_w1, grad_w2


# -- vector-Jacobian products and the two modes ------------------------------------------------------

def vector_jacobian_product(f, x: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    """v^T J of f at x, by one reverse-mode pass: sum_i v_i * d f(x)_i / dx, of x's shape.

    f maps a tensor of x's shape to a tensor y; v has y's shape. x is left as it was (no .grad, not
    made to require grad).
    """
    x = x.detach().requires_grad_(True)  # a leaf of our own: the caller's x is left alone
    (grad,) = torch.autograd.grad((f(x) * v).sum(), x)  # d(sum_i v_i f_i)/dx = v^T J
    return grad


def jacobian_forward(f, x: torch.Tensor) -> torch.Tensor:
    """The Jacobian (m, n) of f: R^n -> R^m at x (n,), a column per Jacobian-vector product (forward mode)."""
    basis = torch.eye(x.numel(), dtype=x.dtype, device=x.device)
    return torch.stack([torch.func.jvp(f, (x,), (e,))[1] for e in basis], dim=1)


def jacobian_reverse(f, x: torch.Tensor) -> torch.Tensor:
    """The Jacobian (m, n) of f: R^n -> R^m at x (n,), a row per vector-Jacobian product (reverse mode)."""
    y, vjp_fn = torch.func.vjp(f, x)
    basis = torch.eye(y.numel(), dtype=y.dtype, device=y.device)
    return torch.stack([vjp_fn(e)[0] for e in basis])


def train_autograd_mlp(x: torch.Tensor, y: torch.Tensor, w1: torch.Tensor, w2: torch.Tensor,
                       learning_rate: float, steps: int) -> list[float]:
    """Full-batch gradient descent with autograd, updating the caller's leaves w1 and w2 in place.

    x: (N, D_in), y: (N, D_out); w1: (D_in, H), w2: (H, D_out) leaves with requires_grad=True.
    Returns losses: a list of `steps` floats, losses[t] being the loss before update t. On return
    w1 and w2 are the same tensor objects, still leaves that require grad, holding the trained values.
    """
    losses = []
    for _ in range(steps):
        loss = ((torch_mlp_forward(x, w1, w2) - y) ** 2).sum()
        losses.append(loss.item())
        loss.backward()
        with torch.no_grad():  # the update is not part of the model: do not record it
            w1 -= learning_rate * w1.grad
            w2 -= learning_rate * w2.grad
        w1.grad = None  # the next backward() would add to these
        w2.grad = None
    return losses


def graph_ops(t: torch.Tensor) -> list[str]:
    """Names of the backward nodes reachable from t.grad_fn, breadth-first, each node once.

    t: any tensor. Returns type(node).__name__ for every node reachable from t.grad_fn through
    next_functions (AccumulateGrad nodes included, None entries skipped), starting with t.grad_fn and
    visiting each node's next_functions in order. A node reached along several paths appears once;
    distinct nodes of the same type each appear. [] when t.grad_fn is None.
    """
    if t.grad_fn is None:
        return []
    seen = {t.grad_fn}
    queue = deque([t.grad_fn])
    names = []
    while queue:
        node = queue.popleft()
        names.append(type(node).__name__)
        for next_node, _ in node.next_functions:
            if next_node is not None and next_node not in seen:
                seen.add(next_node)
                queue.append(next_node)
    return names


def to_numpy(t: torch.Tensor) -> np.ndarray:
    """t's values as a NumPy array of t's shape and dtype, for a tensor on any device, requiring grad or not."""
    return t.detach().cpu().numpy()


# Answers to the questions about the lecture's linear regression graph.
answer_is_leaf = {"x": True, "w": True, "prediction": False, "loss": False}
answer_requires_grad = {"x": False, "w": True, "prediction": True, "loss": True}
# After loss.backward(): is t.grad None?
answer_grad_is_none = {"x": True, "w": False, "prediction": True}
# loss.detach(): does it require grad, does it share memory with loss; does loss.numpy() raise?
answer_detach = {"requires_grad": False, "shares_memory": True, "numpy_raises": True}
# val_prediction made under torch.no_grad(): requires grad? a leaf? does backward() of a loss built on it raise?
answer_no_grad = {"requires_grad": False, "is_leaf": True, "backward_raises": True}


def answer_retain_grad(prediction: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """What prediction.grad holds after prediction.retain_grad(); loss.backward(), for loss = mean((prediction - y)**2).

    prediction, y: (N, 1). Returns d loss / d prediction = 2 (prediction - y) / prediction.numel(): (N, 1).
    In the notebook the answer is this tensor for the notebook's prediction and y.
    """
    return 2 * (prediction - y).detach() / prediction.numel()
