"""The reference answers of 01_numpy_mlp, checked against PyTorch in float64."""

import numpy as np
import pytest
import torch

from helpers.checks import relative_error_of
from helpers.data import mlp_problem
from helpers.reference.numpy_mlp import (
    l2_loss,
    mlp_backward,
    mlp_forward,
    numeric_gradient,
    relative_error,
    relu,
    train_numpy_mlp,
)

SIZES = [(64, 1000, 100, 10), (5, 7, 6, 3), (1, 4, 3, 2)]


def torch_loss(x, y, w1, w2):
    """The oracle: the same net and loss written with torch operations."""
    return ((torch.relu(x @ w1) @ w2 - y) ** 2).sum()


def autograd_grads(x, y, w1, w2):
    leaves = [torch.tensor(a, requires_grad=True) for a in (w1, w2)]
    grads = torch.autograd.grad(torch_loss(torch.from_numpy(x), torch.from_numpy(y), *leaves), leaves)
    return [g.numpy() for g in grads]


def test_relu_matches_torch_keeps_dtype_and_input():
    h = np.random.default_rng(0).standard_normal((4, 5))
    h_before = h.copy()
    np.testing.assert_array_equal(relu(h), torch.relu(torch.from_numpy(h)).numpy())
    np.testing.assert_array_equal(h, h_before)
    assert relu(h.astype(np.float32)).dtype == np.float32


@pytest.mark.parametrize("sizes", SIZES)
def test_mlp_forward_matches_torch_and_caches_pre_activation(sizes):
    x, y, w1, w2 = mlp_problem(1, *sizes)
    y_pred, (h, h_relu, cached) = mlp_forward(x, w1, w2)
    expected = (torch.relu(torch.from_numpy(x) @ torch.from_numpy(w1)) @ torch.from_numpy(w2)).numpy()
    np.testing.assert_allclose(y_pred, expected, rtol=1e-12)
    np.testing.assert_allclose(h, x @ w1, rtol=1e-12)
    np.testing.assert_array_equal(h_relu, np.maximum(h, 0))
    assert cached is y_pred
    if sizes[0] > 1:
        assert (h < 0).any(), "the cache must keep the negative pre-activations"


def test_l2_loss_is_summed_mse():
    rng = np.random.default_rng(2)
    y_pred, y = rng.standard_normal((6, 3)), rng.standard_normal((6, 3))
    expected = torch.nn.functional.mse_loss(torch.from_numpy(y_pred), torch.from_numpy(y), reduction="sum")
    assert l2_loss(y_pred, y) == pytest.approx(expected.item(), rel=1e-12)
    assert isinstance(l2_loss(y_pred, y), float)


@pytest.mark.parametrize("sizes", SIZES)
@pytest.mark.parametrize("seed", [0, 3])
def test_mlp_backward_matches_autograd(sizes, seed):
    x, y, w1, w2 = mlp_problem(seed, *sizes)
    _, cache = mlp_forward(x, w1, w2)
    grad_w1, grad_w2 = mlp_backward(x, y, w1, w2, cache)
    expected_w1, expected_w2 = autograd_grads(x, y, w1, w2)
    assert grad_w1.shape == w1.shape and grad_w2.shape == w2.shape
    np.testing.assert_allclose(grad_w1, expected_w1, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(grad_w2, expected_w2, rtol=1e-10, atol=1e-10)


def test_numeric_gradient_is_centered_and_leaves_w_alone():
    rng = np.random.default_rng(4)
    w = rng.uniform(0.5, 2.0, (3, 4)) * rng.choice([-1.0, 1.0], (3, 4))  # no gradient entry near 0
    w_before = w.copy()
    numeric = numeric_gradient(lambda v: np.sum(v ** 3), w)
    np.testing.assert_array_equal(w, w_before)
    assert relative_error_of(numeric, 3 * w ** 2) < 1e-8  # a one-sided difference gives about 1e-5
    # For a cubic the centered difference is exactly 3 w^2 + eps^2, so eps must be the one passed in.
    np.testing.assert_allclose(numeric_gradient(lambda v: np.sum(v ** 3), w, eps=1e-2), 3 * w ** 2 + 1e-4, rtol=1e-8)


def test_numeric_gradient_agrees_with_autograd_on_the_small_net():
    x, y, w1, w2 = mlp_problem(1, n=4, d_in=5, h=3, d_out=2)
    expected_w1, expected_w2 = autograd_grads(x, y, w1, w2)
    numeric_w1 = numeric_gradient(lambda w: l2_loss(mlp_forward(x, w, w2)[0], y), w1)
    numeric_w2 = numeric_gradient(lambda w: l2_loss(mlp_forward(x, w1, w)[0], y), w2)
    assert relative_error(numeric_w1, expected_w1) < 1e-7
    assert relative_error(numeric_w2, expected_w2) < 1e-7


def test_relative_error_values():
    assert relative_error(np.zeros(3), np.zeros(3)) == 0.0
    assert relative_error(np.array([1e-3]), np.array([2e-3])) == pytest.approx(1 / 3)
    assert relative_error(np.array([-1.0]), np.array([-3.0])) == pytest.approx(0.5)
    assert relative_error(np.array([1.0, -2.0]), np.array([-1.0, -2.0])) == pytest.approx(1.0)
    assert relative_error(np.array([1.0, 10.0]), np.array([1.1, 10.0])) == pytest.approx(0.1 / 2.1)


def test_relative_error_agrees_with_the_checks_and_is_symmetric():
    rng = np.random.default_rng(5)
    a, b = rng.standard_normal((4, 5)), rng.standard_normal((4, 5))
    assert relative_error(a, b) == pytest.approx(relative_error_of(a, b), rel=1e-12)
    assert relative_error(a, b) == relative_error(b, a)


def test_train_numpy_mlp_matches_torch_sgd_and_keeps_the_callers_arrays():
    x, y, w1, w2 = mlp_problem(0)
    w1_before, w2_before = w1.copy(), w2.copy()
    trained_w1, trained_w2, losses = train_numpy_mlp(x, y, w1, w2, learning_rate=1e-6, steps=15)
    np.testing.assert_array_equal(w1, w1_before)
    np.testing.assert_array_equal(w2, w2_before)

    leaves = [torch.tensor(a, requires_grad=True) for a in (w1, w2)]
    optimizer = torch.optim.SGD(leaves, lr=1e-6)
    expected = []
    for _ in range(15):
        optimizer.zero_grad()
        loss = torch_loss(torch.from_numpy(x), torch.from_numpy(y), *leaves)
        expected.append(loss.item())
        loss.backward()
        optimizer.step()
    assert len(losses) == 15 and all(isinstance(loss, float) for loss in losses)
    np.testing.assert_allclose(losses, expected, rtol=1e-9)
    np.testing.assert_allclose(trained_w1, leaves[0].detach().numpy(), rtol=1e-9)
    np.testing.assert_allclose(trained_w2, leaves[1].detach().numpy(), rtol=1e-9)


def test_train_numpy_mlp_fits_the_lecture_problem():
    x, y, w1, w2 = mlp_problem(0)
    _, _, losses = train_numpy_mlp(x, y, w1, w2, learning_rate=1e-6, steps=100)
    assert losses[-1] < 1e-3 * losses[0]


def test_train_numpy_mlp_zero_steps_returns_copies():
    x, y, w1, w2 = mlp_problem(0, n=2, d_in=3, h=2, d_out=1)
    new_w1, new_w2, losses = train_numpy_mlp(x, y, w1, w2, 1e-3, 0)
    assert losses == [] and new_w1 is not w1 and new_w2 is not w2
    np.testing.assert_array_equal(new_w1, w1)


@pytest.mark.parametrize("lead", [(3,), (2, 3), (1, 1, 2)])
def test_mlp_backward_on_leading_dimensions_matches_autograd_and_sums_the_pieces(lead):
    """x (..., D_in): the gradient equals autograd's, and the sum of the gradients of each sequence."""
    rng = np.random.default_rng(sum(lead))
    x, y = rng.standard_normal((*lead, 4, 7)), rng.standard_normal((*lead, 4, 3))
    w1, w2 = rng.standard_normal((7, 5)), rng.standard_normal((5, 3))
    grads = mlp_backward(x, y, w1, w2, mlp_forward(x, w1, w2)[1])
    for got, want in zip(grads, autograd_grads(x, y, w1, w2)):
        assert got.shape == want.shape and relative_error_of(got, want) < 1e-10
    pieces = [mlp_backward(x[i], y[i], w1, w2, mlp_forward(x[i], w1, w2)[1]) for i in np.ndindex(lead)]
    for k in (0, 1):
        np.testing.assert_allclose(grads[k], sum(p[k] for p in pieces), rtol=1e-10, atol=1e-12)


def test_the_slides_rows_only_backward_fails_on_sequences():
    """The oracle tells the CMU 18-661 slides' 2-d products from the derived ones on a batch of sequences."""
    rng = np.random.default_rng(5)
    x, y = rng.standard_normal((3, 4, 7)), rng.standard_normal((3, 4, 3))
    w1, w2 = rng.standard_normal((7, 5)), rng.standard_normal((5, 3))
    h, h_relu, y_pred = mlp_forward(x, w1, w2)[1]
    with pytest.raises(ValueError):
        h_relu.T @ (2.0 * (y_pred - y))  # (5, 4, 3) @ (3, 4, 3): the batch dimensions 5 and 3 do not broadcast


def test_numeric_gradient_error_shrinks_like_eps_squared():
    w = np.random.default_rng(7).uniform(0.5, 2.0, (2, 3))
    errors = [np.max(np.abs(numeric_gradient(lambda v: np.sum(v ** 3), w, eps=e) - 3 * w ** 2)) for e in (1e-2, 5e-3)]
    assert errors[0] / errors[1] == pytest.approx(4.0, rel=1e-3)
