"""The reference modules and manual SGD of 04_nn_modules, with torch.nn.functional and torch.optim as oracles."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
import torch
import torch.nn.functional as F
from notebook_solutions import solution_namespace
from torch import nn

from helpers.reference.nn_modules import (
    DigitsCNN,
    LinearRegression,
    ParallelBlock,
    TwoLayerNet,
    build_sequential,
    conv2d_backward,
    conv2d_forward,
    count_parameters,
    train_manual_sgd,
)

NOTEBOOK = Path(__file__).resolve().parents[1] / "source" / "04_nn_modules" / "04_nn_modules.ipynb"


@pytest.fixture
def x() -> torch.Tensor:
    return torch.randn(8, 5, generator=torch.Generator().manual_seed(0), dtype=torch.float64)


def test_build_sequential_is_linear_relu_linear(x):
    torch.manual_seed(0)
    model = build_sequential(5, 4, 3).double()
    assert isinstance(model, nn.Sequential) and [type(m) for m in model] == [nn.Linear, nn.ReLU, nn.Linear]
    first, _, last = model
    expected = F.linear(F.relu(F.linear(x, first.weight, first.bias)), last.weight, last.bias)
    torch.testing.assert_close(model(x), expected)
    assert count_parameters(model) == 5 * 4 + 4 + 4 * 3 + 3


def test_two_layer_net_against_functional(x):
    torch.manual_seed(1)
    model = TwoLayerNet(5, 4, 3).double()
    l1, l2 = model.linear1, model.linear2
    torch.testing.assert_close(model(x), F.linear(F.relu(F.linear(x, l1.weight, l1.bias)), l2.weight, l2.bias))
    assert len(list(model.parameters())) == 4


def test_parallel_block_against_functional(x):
    torch.manual_seed(2)
    block = ParallelBlock(5, 3).double()
    l1, l2 = block.linear1, block.linear2
    expected = F.relu(F.linear(x, l1.weight, l1.bias) * F.linear(x, l2.weight, l2.bias))
    y = block(x)
    torch.testing.assert_close(y, expected)
    assert (y >= 0).all() and (y == 0).any() and (y > 0).any()  # the clamp acts on this input


def test_linear_regression_parameters_and_forward(x):
    model = LinearRegression(5)
    assert dict(model.named_parameters()).keys() == {"w", "b"}
    assert isinstance(model.w, nn.Parameter) and model.w.shape == (1, 5) and model.b.shape == (1,)
    assert not model.w.any() and not model.b.any()
    model = model.double()
    with torch.no_grad():
        model.w.copy_(torch.arange(5.0)[None])
        model.b.fill_(0.5)
    y_pred = model(x)
    assert y_pred.shape == (8, 1)
    torch.testing.assert_close(y_pred, F.linear(x, model.w, model.b))
    torch.testing.assert_close(y_pred, torch.inner(x, model.w) + model.b)  # the lecture's formulation


def test_count_parameters_skips_frozen_parameters_and_buffers():
    model = nn.Sequential(nn.Linear(4, 3), nn.BatchNorm1d(3), nn.Linear(3, 2))
    assert count_parameters(model) == 15 + 6 + 8  # BatchNorm's running statistics are buffers
    model[0].requires_grad_(False)
    assert count_parameters(model) == 6 + 8
    assert isinstance(count_parameters(model), int)


def sgd_oracle(model, x, y, learning_rate, steps):
    """The same training with torch.optim.SGD on a copy: (losses, trained copy)."""
    model = copy.deepcopy(model)
    optimizer = torch.optim.SGD(model.parameters(), lr=learning_rate)
    losses = []
    for _ in range(steps):
        loss = F.mse_loss(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses, model


def test_train_manual_sgd_matches_torch_optim_sgd(x):
    torch.manual_seed(3)
    model = build_sequential(5, 4, 2).double()
    y = torch.randn(8, 2, dtype=torch.float64)
    expected_losses, expected_model = sgd_oracle(model, x, y, 0.1, 7)
    losses = train_manual_sgd(model, x, y, learning_rate=0.1, steps=7)
    assert all(type(v) is float for v in losses) and len(losses) == 7
    torch.testing.assert_close(torch.tensor(losses), torch.tensor(expected_losses))
    assert losses[-1] < losses[0]
    for p, q in zip(model.parameters(), expected_model.parameters()):
        torch.testing.assert_close(p, q)


def test_train_manual_sgd_leaves_frozen_parameters_alone(x):
    torch.manual_seed(4)
    model = TwoLayerNet(5, 4, 1).double()
    model.linear1.requires_grad_(False)
    before = copy.deepcopy(model.state_dict())
    train_manual_sgd(model, x, torch.randn(8, 1, dtype=torch.float64), learning_rate=0.1, steps=3)
    torch.testing.assert_close(model.linear1.weight, before["linear1.weight"])
    assert not torch.equal(model.linear2.weight, before["linear2.weight"])


def test_the_oracle_catches_a_forgotten_zero_grad(x):
    """The comparison with torch.optim can fail: without zero_grad the second loss already differs."""
    torch.manual_seed(5)
    model = build_sequential(5, 4, 2).double()
    y = torch.randn(8, 2, dtype=torch.float64)
    expected_losses, _ = sgd_oracle(model, x, y, 0.1, 3)
    losses = []
    for _ in range(3):
        loss = F.mse_loss(model(x), y)
        loss.backward()  # gradients pile up in .grad
        with torch.no_grad():
            for p in model.parameters():
                p -= 0.1 * p.grad
        losses.append(loss.item())
    assert losses[0] == pytest.approx(expected_losses[0])
    assert losses[2] != pytest.approx(expected_losses[2], rel=1e-6)


@pytest.mark.skipif(not NOTEBOOK.exists(), reason="the 04 source notebook is not there yet")
def test_source_notebook_solution_agrees_with_the_reference(x):
    ns = solution_namespace(NOTEBOOK)
    y = torch.randn(8, 3, dtype=torch.float64)
    for name, args in [("build_sequential", (5, 4, 3)), ("TwoLayerNet", (5, 4, 3)), ("ParallelBlock", (5, 3))]:
        torch.manual_seed(6)
        ours = ns[name](*args).double()
        torch.manual_seed(6)
        theirs = globals()[name](*args).double()
        torch.testing.assert_close(ours(x), theirs(x))
        assert ns["count_parameters"](ours) == count_parameters(theirs)
        torch.testing.assert_close(torch.tensor(ns["train_manual_sgd"](ours, x, y, 0.05, 4)),
                                   torch.tensor(train_manual_sgd(theirs, x, y, 0.05, 4)))
    ours, theirs = ns["LinearRegression"](5).double(), LinearRegression(5).double()
    torch.testing.assert_close(ns["train_manual_sgd"](ours, x, y[:, :1], 0.05, 4),
                               train_manual_sgd(theirs, x, y[:, :1], 0.05, 4))


CONV_CASES = [  # (N, C_in, C_out, H, W, kH, kW, stride, padding)
    (2, 1, 2, 5, 5, 3, 3, 1, 0), (2, 3, 4, 7, 6, 3, 2, 2, 1), (1, 2, 3, 9, 8, 5, 5, 3, 2), (3, 4, 2, 6, 6, 1, 1, 1, 0),
]


def _conv_case(n, c_in, c_out, h, w, kh, kw, seed=0):
    gen = torch.Generator().manual_seed(seed)
    return (torch.randn(n, c_in, h, w, generator=gen, dtype=torch.float64),
            torch.randn(c_out, c_in, kh, kw, generator=gen, dtype=torch.float64),
            torch.randn(c_out, generator=gen, dtype=torch.float64))


@pytest.mark.parametrize("case", CONV_CASES)
def test_conv2d_forward_equals_f_conv2d(case):
    *shape, stride, padding = case
    x, weight, bias = _conv_case(*shape)
    for b in (bias, None):
        torch.testing.assert_close(conv2d_forward(x, weight, b, stride=stride, padding=padding),
                                   F.conv2d(x, weight, b, stride=stride, padding=padding))


@pytest.mark.parametrize("case", CONV_CASES)
def test_conv2d_backward_equals_autograd_and_passes_gradcheck(case):
    *shape, stride, padding = case
    x, weight, bias = _conv_case(*shape, seed=1)
    leaves = [t.clone().requires_grad_(True) for t in (x, weight, bias)]
    out = F.conv2d(*leaves, stride=stride, padding=padding)
    grad_out = torch.randn_like(out)
    for mine, want in zip(conv2d_backward(grad_out, x, weight, stride=stride, padding=padding),
                          torch.autograd.grad(out, leaves, grad_out)):
        torch.testing.assert_close(mine, want)

    class Conv(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, weight, bias):
            ctx.save_for_backward(x, weight)
            return conv2d_forward(x, weight, bias, stride=stride, padding=padding)

        @staticmethod
        def backward(ctx, grad_out):
            return conv2d_backward(grad_out, *ctx.saved_tensors, stride=stride, padding=padding)

    assert torch.autograd.gradcheck(Conv.apply, tuple(t.clone().requires_grad_(True) for t in (x, weight, bias)))


def test_the_conv_oracle_catches_a_kernel_flattened_channels_last():
    """The channels-last flattening agrees with F.conv2d on one input channel, and only there."""
    x, weight, bias = _conv_case(2, 3, 2, 6, 6, 3, 3)
    c_out = weight.shape[0]
    wrong = (weight.permute(0, 2, 3, 1).reshape(c_out, -1) @ F.unfold(x, (3, 3)) + bias[:, None]).reshape(2, 2, 4, 4)
    assert not torch.allclose(wrong, F.conv2d(x, weight, bias))


def test_digits_cnn_is_within_the_mlp_budget_and_maps_digits_to_ten_scores():
    model = DigitsCNN()
    assert any(isinstance(m, nn.Conv2d) for m in model.modules())
    assert count_parameters(model) <= count_parameters(build_sequential(64, 100, 10)) == 7510
    assert model(torch.zeros(3, 1, 8, 8)).shape == (3, 10)


@pytest.mark.skipif(not NOTEBOOK.exists(), reason="the 04 source notebook is not there yet")
def test_source_notebook_convolution_agrees_with_the_reference():
    ns = solution_namespace(NOTEBOOK)
    for *shape, stride, padding in CONV_CASES:
        x, weight, bias = _conv_case(*shape, seed=2)
        torch.testing.assert_close(ns["conv2d_forward"](x, weight, bias, stride, padding),
                                   conv2d_forward(x, weight, bias, stride, padding))
        grad_out = torch.randn_like(conv2d_forward(x, weight, bias, stride, padding))
        for ours, theirs in zip(ns["conv2d_backward"](grad_out, x, weight, stride, padding),
                                conv2d_backward(grad_out, x, weight, stride, padding)):
            torch.testing.assert_close(ours, theirs)
