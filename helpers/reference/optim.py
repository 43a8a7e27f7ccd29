"""Reference answers of 05_optim: a manual SGD step, SGD with momentum, Adam, a training loop.

Both optimizers follow PyTorch's own formulation so that, given the same hyperparameters,
they match `torch.optim.SGD(momentum=...)` and `torch.optim.Adam` step for step. Neither
supports weight decay, dampening, Nesterov momentum or AMSGrad.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterable

import torch
from torch import nn


@torch.no_grad()
def sgd_step(params: Iterable[torch.Tensor], learning_rate: float) -> None:
    """One plain SGD update, in place: p -= learning_rate * p.grad for every p that has a gradient.

    params: tensors of any shape (a list, or a generator such as `model.parameters()`);
    parameters whose `.grad` is None (unused in the last forward) are skipped.
    The gradients are left as they are: zeroing them is the caller's job.
    """
    for p in params:
        if p.grad is None:
            continue
        p.sub_(learning_rate * p.grad)


class SGDMomentum(torch.optim.Optimizer):
    """SGD with momentum as PyTorch writes it: v = momentum * v + g, then p -= lr * v.

    On the first step of a parameter the velocity starts as v = g. The velocity lives in
    `self.state[p]["momentum_buffer"]`, so it survives between steps and is saved by
    `state_dict()`. `lr` is read from the parameter group at every step, so a scheduler
    that changes it changes the next update only (the velocity holds gradients, not steps).
    No weight decay, dampening or Nesterov: this is `torch.optim.SGD(params, lr, momentum)`.
    """

    def __init__(self, params, lr: float, momentum: float = 0.9):
        if lr < 0.0:
            raise ValueError(f"invalid learning rate {lr}: must be >= 0")
        if momentum < 0.0:
            raise ValueError(f"invalid momentum {momentum}: must be >= 0")
        super().__init__(params, {"lr": lr, "momentum": momentum})

    @torch.no_grad()
    def step(self, closure: Callable[[], torch.Tensor] | None = None) -> torch.Tensor | None:
        """Update every parameter that has a gradient; returns the closure's loss, if one is given."""
        loss = None
        if closure is not None:
            with torch.enable_grad():
                loss = closure()
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    continue
                state = self.state[p]
                if "momentum_buffer" not in state:
                    state["momentum_buffer"] = p.grad.detach().clone()  # v_1 = g_1
                else:
                    state["momentum_buffer"].mul_(group["momentum"]).add_(p.grad)
                p.sub_(group["lr"] * state["momentum_buffer"])
        return loss


class Adam(torch.optim.Optimizer):
    """Adam with bias correction, as `torch.optim.Adam` (no weight decay, no AMSGrad).

    Per parameter, with t counting this parameter's updates from 1:
        m = beta1 * m + (1 - beta1) * g          v = beta2 * v + (1 - beta2) * g**2
        m_hat = m / (1 - beta1**t)               v_hat = v / (1 - beta2**t)
        p -= lr * m_hat / (sqrt(v_hat) + eps)    # eps outside the square root
    m, v (zeros at first) and t live in `self.state[p]`; the stored m and v are never the
    bias-corrected ones.
    """

    def __init__(self, params, lr: float = 1e-3, betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8):
        if lr < 0.0:
            raise ValueError(f"invalid learning rate {lr}: must be >= 0")
        if not (0.0 <= betas[0] < 1.0 and 0.0 <= betas[1] < 1.0):
            raise ValueError(f"invalid betas {betas}: each must be in [0, 1)")
        if eps < 0.0:
            raise ValueError(f"invalid eps {eps}: must be >= 0")
        super().__init__(params, {"lr": lr, "betas": betas, "eps": eps})

    @torch.no_grad()
    def step(self, closure: Callable[[], torch.Tensor] | None = None) -> torch.Tensor | None:
        """Update every parameter that has a gradient; returns the closure's loss, if one is given."""
        loss = None
        if closure is not None:
            with torch.enable_grad():
                loss = closure()
        for group in self.param_groups:
            beta1, beta2 = group["betas"]
            for p in group["params"]:
                if p.grad is None:
                    continue
                g = p.grad
                state = self.state[p]
                if not state:
                    state["step"] = 0
                    state["exp_avg"] = torch.zeros_like(p)
                    state["exp_avg_sq"] = torch.zeros_like(p)
                state["step"] += 1
                t = state["step"]
                m, v = state["exp_avg"], state["exp_avg_sq"]
                m.mul_(beta1).add_(g, alpha=1 - beta1)
                v.mul_(beta2).addcmul_(g, g, value=1 - beta2)
                m_hat = m / (1 - beta1**t)  # new tensors: the state keeps the raw moments
                v_hat = v / (1 - beta2**t)
                p.sub_(group["lr"] * m_hat / (v_hat.sqrt() + group["eps"]))
        return loss


def train(model: nn.Module, optimizer: torch.optim.Optimizer,
          loss_fn: Callable[[torch.Tensor, torch.Tensor], torch.Tensor],
          x: torch.Tensor, y: torch.Tensor, steps: int) -> list[float]:
    """Full-batch training: `steps` times zero the gradients, forward, backward, step.

    x: (N, ...) inputs and y: (N, ...) targets for `model` and `loss_fn` (a scalar loss).
    Returns `steps` Python floats: the loss at the parameters each step's gradient was taken at,
    so losses[0] is the loss of the model as it was passed in.
    """
    losses = []
    for _ in range(steps):
        optimizer.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())  # a float, not a tensor that keeps its graph alive
    return losses


def save_checkpoint(model: nn.Module, optimizer: torch.optim.Optimizer, step: int) -> dict:
    """A snapshot {"model", "optimizer", "step"}: copies of both state_dicts (a state_dict holds the live
    tensors, which later training changes), so that it stays as it was; torch.save can write it."""
    return copy.deepcopy({"model": model.state_dict(), "optimizer": optimizer.state_dict(), "step": step})


def load_checkpoint(model: nn.Module, optimizer: torch.optim.Optimizer, checkpoint: dict) -> int:
    """Restore model and optimizer in place from a save_checkpoint dict; returns its step. Training on from
    there gives exactly the numbers of the uninterrupted run."""
    model.load_state_dict(checkpoint["model"])
    optimizer.load_state_dict(checkpoint["optimizer"])
    return checkpoint["step"]
