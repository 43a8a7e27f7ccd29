"""helpers.reference.optim against torch.optim, in float64, over many steps."""

from __future__ import annotations

import copy

import pytest
import torch
from torch import nn
from torch.testing import assert_close

from helpers.reference.optim import (
    Adam,
    AdamW,
    SGDMomentum,
    first_steps_under_weight_decay,
    sgd_step,
    train,
)

TOL = {"rtol": 1e-10, "atol": 1e-12}


def make_model(seed: int = 0, d_in: int = 5, h: int = 7, d_out: int = 3) -> nn.Module:
    torch.manual_seed(seed)
    return nn.Sequential(nn.Linear(d_in, h), nn.Tanh(), nn.Linear(h, d_out)).double()


def make_data(seed: int = 1, n: int = 16, d_in: int = 5, d_out: int = 3):
    g = torch.Generator().manual_seed(seed)
    return (torch.randn(n, d_in, generator=g, dtype=torch.float64),
            torch.randn(n, d_out, generator=g, dtype=torch.float64))


def run_side_by_side(make_ours, make_theirs, steps=40, lr_change_at=None, seed=0):
    """Train two copies of a model, one per optimizer; return the largest parameter difference seen."""
    model_a = make_model(seed)
    model_b = copy.deepcopy(model_a)
    opt_a, opt_b = make_ours(model_a), make_theirs(model_b)
    x, y = make_data(seed + 1)
    worst = 0.0
    for step in range(1, steps + 1):
        if step == lr_change_at:
            for opt in (opt_a, opt_b):
                for group in opt.param_groups:
                    group["lr"] *= 0.3
        for model, opt in ((model_a, opt_a), (model_b, opt_b)):
            opt.zero_grad()
            nn.functional.mse_loss(model(x), y).backward()
            opt.step()
        for p, q in zip(model_a.parameters(), model_b.parameters()):
            worst = max(worst, float((p - q).detach().abs().max()))
    return worst


# --- sgd_step --------------------------------------------------------------------------------

def test_sgd_step_updates_in_place_and_skips_missing_grads():
    w = torch.randn(4, 3, dtype=torch.float64, requires_grad=True)
    unused = torch.randn(2, dtype=torch.float64, requires_grad=True)
    (w ** 2).sum().backward()
    w_before, grad, unused_before = w.detach().clone(), w.grad.clone(), unused.detach().clone()
    sgd_step([w, unused], learning_rate=0.1)
    assert_close(w.detach(), w_before - 0.1 * grad, **TOL)
    assert torch.equal(unused.detach(), unused_before) and unused.grad is None
    assert w.is_leaf and w.requires_grad and torch.equal(w.grad, grad)


def test_sgd_step_matches_torch_sgd_with_a_generator_of_parameters():
    worst = run_side_by_side(
        make_ours=lambda m: _ManualSGD(m.parameters(), lr=0.05),
        make_theirs=lambda m: torch.optim.SGD(m.parameters(), lr=0.05),
    )
    assert worst <= 1e-12


class _ManualSGD(torch.optim.Optimizer):
    """sgd_step wrapped as an optimizer, fed `model.parameters()`-style generators."""

    def __init__(self, params, lr):
        super().__init__(params, {"lr": lr})

    def step(self, closure=None):
        for group in self.param_groups:
            sgd_step(iter(group["params"]), group["lr"])


# --- SGDMomentum -----------------------------------------------------------------------------

@pytest.mark.parametrize("momentum", [0.0, 0.5, 0.9])
def test_sgd_momentum_matches_torch_including_a_learning_rate_change(momentum):
    worst = run_side_by_side(
        make_ours=lambda m: SGDMomentum(m.parameters(), lr=0.05, momentum=momentum),
        make_theirs=lambda m: torch.optim.SGD(m.parameters(), lr=0.05, momentum=momentum),
        steps=50, lr_change_at=20,
    )
    assert worst <= 1e-12


def test_sgd_momentum_with_param_groups_and_a_scheduler():
    def groups(model, cls):
        first, last = model[0], model[2]
        return cls([{"params": first.parameters(), "lr": 0.02},
                    {"params": last.parameters(), "momentum": 0.5}], lr=0.1, momentum=0.9)

    model_a = make_model(3)
    model_b = copy.deepcopy(model_a)
    opt_a, opt_b = groups(model_a, SGDMomentum), groups(model_b, torch.optim.SGD)
    sched_a = torch.optim.lr_scheduler.StepLR(opt_a, step_size=7, gamma=0.5)
    sched_b = torch.optim.lr_scheduler.StepLR(opt_b, step_size=7, gamma=0.5)
    x, y = make_data(4)
    for _ in range(30):
        for model, opt, sched in ((model_a, opt_a, sched_a), (model_b, opt_b, sched_b)):
            opt.zero_grad()
            nn.functional.mse_loss(model(x), y).backward()
            opt.step()
            sched.step()
    for p, q in zip(model_a.parameters(), model_b.parameters()):
        assert_close(p, q, **TOL)


def test_sgd_momentum_keeps_its_velocity_in_state_dict():
    model = make_model(5)
    opt = SGDMomentum(model.parameters(), lr=0.1, momentum=0.9)
    x, y = make_data(6)
    nn.functional.mse_loss(model(x), y).backward()
    opt.step()
    buffers = [s["momentum_buffer"] for s in opt.state_dict()["state"].values()]
    assert len(buffers) == 4 and all(b.shape == p.shape for b, p in zip(buffers, model.parameters()))


def test_momentum_folded_into_velocity_differs_only_after_a_learning_rate_change():
    """The comparison is sensitive: v = mu * v + lr * g agrees at constant lr and not after a change."""

    class FoldedLR(SGDMomentum):
        @torch.no_grad()
        def step(self, closure=None):
            for group in self.param_groups:
                for p in group["params"]:
                    state = self.state[p]
                    v = state.get("v", torch.zeros_like(p)) * group["momentum"] + group["lr"] * p.grad
                    state["v"] = v
                    p.sub_(v)

    def ours(m):
        return FoldedLR(m.parameters(), lr=0.05, momentum=0.9)

    def theirs(m):
        return torch.optim.SGD(m.parameters(), lr=0.05, momentum=0.9)

    assert run_side_by_side(ours, theirs, steps=20) <= 1e-10
    assert run_side_by_side(ours, theirs, steps=30, lr_change_at=15) > 1e-4


# --- Adam ------------------------------------------------------------------------------------

@pytest.mark.parametrize("kwargs", [
    {},  # the defaults
    {"lr": 0.05, "betas": (0.8, 0.99), "eps": 1e-3},
    {"lr": 0.01, "betas": (0.0, 0.5), "eps": 1e-6},
])
def test_adam_matches_torch_including_a_learning_rate_change(kwargs):
    worst = run_side_by_side(
        make_ours=lambda m: Adam(m.parameters(), **kwargs),
        make_theirs=lambda m: torch.optim.Adam(m.parameters(), **kwargs),
        steps=60, lr_change_at=30,
    )
    assert worst <= 1e-10


def test_adam_skips_parameters_without_gradients_and_counts_steps_per_parameter():
    torch.manual_seed(7)
    used = nn.Linear(3, 2).double()
    sometimes = nn.Linear(3, 2).double()
    copies = copy.deepcopy((used, sometimes))
    opt_a = Adam([*used.parameters(), *sometimes.parameters()], lr=0.1)
    opt_b = torch.optim.Adam([*copies[0].parameters(), *copies[1].parameters()], lr=0.1)
    x = torch.randn(8, 3, dtype=torch.float64)
    for step in range(12):
        for (u, s), opt in (((used, sometimes), opt_a), (copies, opt_b)):
            opt.zero_grad()  # set_to_none: an unused layer has grad None
            out = u(x) if step % 3 else u(x) + s(x)
            out.pow(2).mean().backward()
            opt.step()
    for p, q in zip([*used.parameters(), *sometimes.parameters()],
                    [*copies[0].parameters(), *copies[1].parameters()]):
        assert_close(p, q, **TOL)


def test_adam_float32_matches_torch_closely():
    def run(cls):
        torch.manual_seed(0)
        model = nn.Sequential(nn.Linear(6, 8), nn.ReLU(), nn.Linear(8, 2))
        opt = cls(model.parameters(), lr=0.01)
        g = torch.Generator().manual_seed(9)
        x, y = torch.randn(32, 6, generator=g), torch.randn(32, 2, generator=g)
        for _ in range(40):
            opt.zero_grad()
            nn.functional.mse_loss(model(x), y).backward()
            opt.step()
        return [p.detach() for p in model.parameters()]

    for p, q in zip(run(Adam), run(torch.optim.Adam)):
        assert_close(p, q, rtol=1e-4, atol=1e-5)


def test_adam_with_eps_inside_the_square_root_is_told_apart():
    """The comparison is sensitive to where eps goes when eps is not tiny."""

    class EpsInside(Adam):
        @torch.no_grad()
        def step(self, closure=None):
            for group in self.param_groups:
                b1, b2 = group["betas"]
                for p in group["params"]:
                    s = self.state[p]
                    if not s:
                        s.update(t=0, m=torch.zeros_like(p), v=torch.zeros_like(p))
                    s["t"] += 1
                    s["m"].mul_(b1).add_(p.grad, alpha=1 - b1)
                    s["v"].mul_(b2).addcmul_(p.grad, p.grad, value=1 - b2)
                    m_hat, v_hat = s["m"] / (1 - b1 ** s["t"]), s["v"] / (1 - b2 ** s["t"])
                    p.sub_(group["lr"] * m_hat / (v_hat + group["eps"]).sqrt())

    kwargs = {"lr": 0.05, "betas": (0.8, 0.99), "eps": 1e-3}
    worst = run_side_by_side(lambda m: EpsInside(m.parameters(), **kwargs),
                             lambda m: torch.optim.Adam(m.parameters(), **kwargs), steps=5)
    assert worst > 1e-4


# --- train -----------------------------------------------------------------------------------

def test_train_matches_a_hand_written_loop_and_returns_floats():
    model_a = make_model(11)
    model_b = copy.deepcopy(model_a)
    x, y = make_data(12)
    loss_fn = nn.MSELoss()
    initial = loss_fn(model_a(x), y).item()
    losses = train(model_a, torch.optim.SGD(model_a.parameters(), lr=0.1), loss_fn, x, y, steps=25)

    opt_b = torch.optim.SGD(model_b.parameters(), lr=0.1)
    expected = []
    for _ in range(25):
        opt_b.zero_grad()
        loss = loss_fn(model_b(x), y)
        loss.backward()
        opt_b.step()
        expected.append(loss.item())

    assert len(losses) == 25 and all(type(v) is float for v in losses)
    assert losses[0] == pytest.approx(initial, rel=1e-12)
    assert losses == pytest.approx(expected, rel=1e-12)
    assert losses[-1] < losses[0]
    for p, q in zip(model_a.parameters(), model_b.parameters()):
        assert_close(p, q, **TOL)


# --- AdamW and the weight-decay question -----------------------------------------------------

@pytest.mark.parametrize("kwargs", [
    {},  # the defaults: weight_decay 1e-2
    {"lr": 0.05, "betas": (0.8, 0.99), "eps": 1e-3, "weight_decay": 0.3},
    {"lr": 0.01, "betas": (0.0, 0.5), "eps": 1e-6, "weight_decay": 0.0},
])
def test_adamw_matches_torch_including_a_learning_rate_change(kwargs):
    worst = run_side_by_side(
        make_ours=lambda m: AdamW(m.parameters(), **kwargs),
        make_theirs=lambda m: torch.optim.AdamW(m.parameters(), **kwargs),
        steps=60, lr_change_at=30,
    )
    assert worst <= 1e-10


def test_adamw_with_groups_of_their_own_decay_and_a_state_dict_round_trip():
    def make(model, cls):
        return cls([{"params": model[0].parameters(), "weight_decay": 0.5},
                    {"params": model[2].parameters(), "lr": 0.01}], lr=0.05, weight_decay=0.1)

    worst = run_side_by_side(lambda m: make(m, AdamW), lambda m: make(m, torch.optim.AdamW), steps=30)
    assert worst <= 1e-10
    model = make_model(2)
    opt = make(model, AdamW)
    assert [g["weight_decay"] for g in opt.param_groups] == [0.5, 0.1]
    again = make(make_model(3), AdamW)
    again.load_state_dict(opt.state_dict())
    assert [g["weight_decay"] for g in again.param_groups] == [0.5, 0.1]


def test_l2_in_the_gradient_differs_from_decoupled_decay_under_adam_and_not_under_sgd():
    """The oracle the exercise rests on: SGD's weight_decay equals shrinking the weights; Adam's does not."""
    def last(make, steps=20):
        model = make_model(4)
        opt = make(model)
        x, y = make_data(5)
        for _ in range(steps):
            opt.zero_grad()
            nn.functional.mse_loss(model(x), y).backward()
            opt.step()
        return torch.cat([p.detach().reshape(-1) for p in model.parameters()])

    class DecoupledSGD(torch.optim.SGD):
        @torch.no_grad()
        def step(self, closure=None):
            for group in self.param_groups:
                for p in group["params"]:
                    if p.grad is not None:
                        p.mul_(1 - group["lr"] * 0.1)
            return super().step(closure)

    assert_close(last(lambda m: torch.optim.SGD(m.parameters(), lr=0.1, weight_decay=0.1)),
                 last(lambda m: DecoupledSGD(m.parameters(), lr=0.1)), **TOL)
    l2, decoupled = (last(lambda m: torch.optim.Adam(m.parameters(), lr=0.05, weight_decay=0.1)),
                     last(lambda m: AdamW(m.parameters(), lr=0.05, weight_decay=0.1)))
    assert float((l2 - decoupled).abs().max()) > 1e-2


def test_the_first_steps_under_weight_decay_are_torchs():
    found = first_steps_under_weight_decay(2.0, 0.1, (0.01, 0.1))
    for wd in (0.01, 0.1):
        for cls, key in ((torch.optim.Adam, f"adam_l2_{wd:g}"), (torch.optim.AdamW, f"adamw_{wd:g}")):
            p = torch.tensor([2.0], dtype=torch.float64, requires_grad=True)
            opt = cls([p], lr=0.1, weight_decay=wd)
            p.grad = torch.zeros_like(p)
            opt.step()
            assert found[key] == pytest.approx(2.0 - float(p.detach()), rel=1e-9)
    assert found["adam_l2_0.01"] == pytest.approx(found["adam_l2_0.1"], rel=1e-5)  # lambda cancels under Adam
    assert found["adamw_0.1"] == pytest.approx(10 * found["adamw_0.01"])
