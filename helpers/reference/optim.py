"""Reference answers of 05_optim: a manual SGD step, SGD with momentum, Adam, AdamW, a training loop,
a checkpoint that resumes a run exactly, and the first steps of L2 against decoupled weight decay.

The optimizers follow PyTorch's own formulation so that, given the same hyperparameters, they match
`torch.optim.SGD(momentum=...)`, `torch.optim.Adam` and `torch.optim.AdamW` step for step. None supports
dampening, Nesterov momentum or AMSGrad; only AdamW has weight decay (its decoupled kind).
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


class AdamW(Adam):
    """Adam with decoupled weight decay, as `torch.optim.AdamW` (Loshchilov and Hutter, 2019).

    The averages m and v see the loss's gradient alone; the decay acts on the weight itself, before this
    step's Adam update and on the parameters that have a gradient only:
        p = p * (1 - lr * weight_decay)          then Adam's  p -= lr * m_hat / (sqrt(v_hat) + eps)
    A weight whose loss gradient is zero shrinks by (1 - lr * weight_decay) per step, the factor plain SGD
    with an L2 term (weight_decay / 2) * ||p||**2 applies. weight_decay=0 is Adam.
    """

    def __init__(self, params, lr: float = 1e-3, betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 1e-2):
        if weight_decay < 0.0:
            raise ValueError(f"invalid weight_decay {weight_decay}: must be >= 0")
        super().__init__(params, lr=lr, betas=betas, eps=eps)
        for group in self.param_groups:  # Adam's __init__ knew no weight_decay: every group gets the default
            group.setdefault("weight_decay", weight_decay)
        self.defaults["weight_decay"] = weight_decay

    @torch.no_grad()
    def step(self, closure: Callable[[], torch.Tensor] | None = None) -> torch.Tensor | None:
        """Decay every parameter that has a gradient, then Adam's update; returns the closure's loss."""
        loss = None
        if closure is not None:
            with torch.enable_grad():
                loss = closure()
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is not None:
                    p.mul_(1 - group["lr"] * group["weight_decay"])  # Adam's update does not read p
        super().step()
        return loss


def first_steps_under_weight_decay(p0: float, lr: float, weight_decays, betas=(0.9, 0.999), eps=1e-8) -> dict:
    """How far the first step moves a weight p0 whose loss gradient is zero, for each weight decay:
    {"adam_l2_<wd>": under torch.optim.Adam(weight_decay=wd), the L2 term's gradient wd * p0 in the
    averages, "adamw_<wd>": under AdamW(weight_decay=wd)}. Step sizes |p1 - p0|, as floats."""
    found = {}
    for wd in weight_decays:
        g = wd * p0  # the only gradient: the L2 term's
        m_hat, v_hat = g, g * g  # after one step the bias correction gives back g and g**2 exactly
        found[f"adam_l2_{wd:g}"] = abs(lr * m_hat / (abs(v_hat) ** 0.5 + eps))
        found[f"adamw_{wd:g}"] = abs(lr * wd * p0)  # the loss gradient is zero: m = v = 0, no Adam step
    return found


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


def save_checkpoint(model: nn.Module, optimizer: torch.optim.Optimizer, step: int, scheduler=None,
                    generator: torch.Generator | None = None) -> dict:
    """A snapshot of everything a run depends on, so that resuming from it equals continuing:
    {"model", "optimizer", "step"} (the layout of PyTorch's tutorials), "scheduler" (its state_dict, when
    there is one), "rng" (torch's global random state: dropout draws from it; CUDA's too, where there is
    one) and "generator" (the state of the generator a DataLoader shuffles with, when there is one).
    Copies throughout (a state_dict holds the live tensors, which later training changes); torch.save can
    write it."""
    checkpoint = {"model": model.state_dict(), "optimizer": optimizer.state_dict(), "step": step,
                  "rng": torch.get_rng_state()}
    if torch.cuda.is_available():
        checkpoint["cuda_rng"] = torch.cuda.get_rng_state_all()
    if scheduler is not None:
        checkpoint["scheduler"] = scheduler.state_dict()
    if generator is not None:
        checkpoint["generator"] = generator.get_state()
    return copy.deepcopy(checkpoint)


def load_checkpoint(model: nn.Module, optimizer: torch.optim.Optimizer, checkpoint: dict, scheduler=None,
                    generator: torch.Generator | None = None) -> int:
    """Restore model, optimizer, scheduler, torch's random state and the generator in place from a
    save_checkpoint dict, in a program that built them the same way; returns its step. Training on from
    there gives exactly the numbers of the uninterrupted run."""
    model.load_state_dict(checkpoint["model"])
    optimizer.load_state_dict(checkpoint["optimizer"])
    if scheduler is not None:
        scheduler.load_state_dict(checkpoint["scheduler"])
    if generator is not None:
        generator.set_state(checkpoint["generator"])
    torch.set_rng_state(checkpoint["rng"])
    if "cuda_rng" in checkpoint and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(checkpoint["cuda_rng"])
    return checkpoint["step"]
