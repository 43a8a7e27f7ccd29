"""The reference answers of 02_autograd, checked against PyTorch's own behaviour and 01's NumPy reference."""

import warnings

import numpy as np
import pytest
import torch

from helpers.data import mlp_problem
from helpers.reference import autograd as ref
from helpers.reference.numpy_mlp import mlp_backward, mlp_forward, train_numpy_mlp


def tensors(seed=0, sizes=(6, 9, 5, 3)):
    x, y, w1, w2 = (torch.from_numpy(a) for a in mlp_problem(seed, *sizes))
    return x, y, w1.clone().requires_grad_(), w2.clone().requires_grad_()


def test_torch_mlp_forward_matches_numpy_and_records_a_graph():
    x, y, w1, w2 = tensors()
    y_pred = ref.torch_mlp_forward(x, w1, w2)
    expected, _ = mlp_forward(x.numpy(), w1.detach().numpy(), w2.detach().numpy())
    np.testing.assert_allclose(y_pred.detach().numpy(), expected, rtol=1e-12)
    assert y_pred.grad_fn is not None


def test_autograd_gradients_match_the_hand_written_backward():
    x, y, w1, w2 = tensors(1)
    grad_w1, grad_w2 = ref.autograd_gradients(x, y, w1, w2)
    x_np, y_np, w1_np, w2_np = (t.detach().numpy() for t in (x, y, w1, w2))
    _, cache = mlp_forward(x_np, w1_np, w2_np)
    expected_w1, expected_w2 = mlp_backward(x_np, y_np, w1_np, w2_np, cache)
    np.testing.assert_allclose(grad_w1.numpy(), expected_w1, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(grad_w2.numpy(), expected_w2, rtol=1e-10, atol=1e-10)


def test_autograd_gradients_ignores_stale_grad_and_leaves_none_behind():
    x, y, w1, w2 = tensors(2)
    expected = torch.autograd.grad(((ref.torch_mlp_forward(x, w1, w2) - y) ** 2).sum(), (w1, w2))
    w1.grad, w2.grad = torch.ones_like(w1), torch.ones_like(w2)
    for _ in range(2):
        grads = ref.autograd_gradients(x, y, w1, w2)
        for got, want in zip(grads, expected):
            torch.testing.assert_close(got, want)
        assert w1.grad is None and w2.grad is None


def test_train_autograd_mlp_follows_the_numpy_trajectory_in_place():
    x, y, w1, w2 = tensors(0, (64, 1000, 100, 10))
    w1_object = w1
    expected_w1, expected_w2, expected_losses = train_numpy_mlp(
        x.numpy(), y.numpy(), w1.detach().numpy().copy(), w2.detach().numpy().copy(), 1e-6, 20)
    losses = ref.train_autograd_mlp(x, y, w1, w2, 1e-6, 20)
    assert all(type(loss) is float for loss in losses)
    np.testing.assert_allclose(losses, expected_losses, rtol=1e-9)
    assert w1 is w1_object and w1.is_leaf and w1.requires_grad
    np.testing.assert_allclose(w1.detach().numpy(), expected_w1, rtol=1e-9)
    np.testing.assert_allclose(w2.detach().numpy(), expected_w2, rtol=1e-9)


def test_train_autograd_mlp_works_in_float32():
    x, y, w1, w2 = (t.detach().float() for t in tensors(3, (16, 30, 20, 4)))
    _, _, expected_losses = train_numpy_mlp(*(t.double().numpy() for t in (x, y, w1, w2)), 3e-4, 10)
    losses = ref.train_autograd_mlp(x, y, w1.requires_grad_(), w2.requires_grad_(), 3e-4, 10)
    np.testing.assert_allclose(losses, expected_losses, rtol=1e-4)


def test_graph_ops_on_the_lecture_net_is_breadth_first():
    x, y, w1, w2 = tensors()
    loss = (torch.relu(x @ w1) @ w2 - y).pow(2).sum()
    assert ref.graph_ops(loss) == ["SumBackward0", "PowBackward0", "SubBackward0", "MmBackward0", "ReluBackward0",
                                   "AccumulateGrad", "MmBackward0", "AccumulateGrad"]


def test_graph_ops_lists_a_shared_node_once_but_equal_kinds_twice():
    w = torch.tensor([1.0, 2.0], requires_grad=True)
    a = w * 3
    assert ref.graph_ops((a + a.exp()).sum()) == ["SumBackward0", "AddBackward0", "MulBackward0", "ExpBackward0",
                                                  "AccumulateGrad"]
    v = torch.tensor([0.5], requires_grad=True)
    # Breadth-first differs from depth-first here: both Mul nodes come before any AccumulateGrad.
    assert ref.graph_ops((v * 2) + (w * 3).sum()) == ["AddBackward0", "MulBackward0", "SumBackward0",
                                                      "AccumulateGrad", "MulBackward0", "AccumulateGrad"]
    assert ref.graph_ops((w * w * w).sum()).count("AccumulateGrad") == 1


def test_graph_ops_without_a_graph_is_empty():
    w = torch.ones(2, requires_grad=True)
    with torch.no_grad():
        frozen = w * 2
    assert ref.graph_ops(w) == [] and ref.graph_ops(frozen) == [] and ref.graph_ops(torch.ones(3)) == []


def test_to_numpy_handles_grad_and_dtypes():
    w = torch.linspace(-1, 1, 6).reshape(2, 3).requires_grad_()
    for t in (w, (w ** 2).sum(), torch.arange(4)):
        array = ref.to_numpy(t)
        assert isinstance(array, np.ndarray) and array.shape == tuple(t.shape)
        assert array.dtype == t.detach().numpy().dtype
        np.testing.assert_array_equal(array, t.detach().numpy())


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
def test_to_numpy_on_cuda():
    t = torch.arange(6.0, device="cuda").requires_grad_() * 2
    np.testing.assert_array_equal(ref.to_numpy(t), np.arange(6.0, dtype=np.float32) * 2)


def regression_graph():
    """The notebook's read-only cell: the lecture's linear regression."""
    generator = torch.Generator().manual_seed(0)
    x = torch.arange(0, 10, 0.1)[:, None]
    y = 3 * x + torch.randn(x.shape, generator=generator)
    w = torch.zeros(1, 1, requires_grad=True)
    b = torch.zeros(1, requires_grad=True)
    prediction = x @ w.T + b
    loss = torch.mean((prediction - y) ** 2)
    return {"x": x, "y": y, "w": w, "b": b, "prediction": prediction, "loss": loss}


def test_answers_about_leaves_requires_grad_and_grad():
    g = regression_graph()
    assert ref.answer_is_leaf == {k: g[k].is_leaf for k in ref.answer_is_leaf}
    assert ref.answer_requires_grad == {k: g[k].requires_grad for k in ref.answer_requires_grad}
    g["loss"].backward()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # .grad of a non-leaf warns
        assert ref.answer_grad_is_none == {k: g[k].grad is None for k in ref.answer_grad_is_none}


def test_answer_retain_grad_is_what_retain_grad_keeps():
    g = regression_graph()
    g["prediction"].retain_grad()
    g["loss"].backward()
    torch.testing.assert_close(ref.answer_retain_grad(g["prediction"], g["y"]), g["prediction"].grad)


def test_answers_about_detach_and_no_grad():
    g = regression_graph()
    detached = g["loss"].detach()
    with pytest.raises(RuntimeError):
        g["loss"].numpy()
    assert ref.answer_detach == {"requires_grad": detached.requires_grad,
                                 "shares_memory": detached.data_ptr() == g["loss"].data_ptr(),
                                 "numpy_raises": True}
    with torch.no_grad():
        val_prediction = g["x"] @ g["w"].T + g["b"]
    with pytest.raises(RuntimeError):
        torch.mean((val_prediction - g["y"]) ** 2).backward()
    assert ref.answer_no_grad == {"requires_grad": val_prediction.requires_grad, "is_leaf": val_prediction.is_leaf,
                                  "backward_raises": True}


def test_pairwise_sq_distances_matches_the_definition_never_goes_negative_and_is_differentiable():
    generator = torch.Generator().manual_seed(0)
    a = torch.randn(7, 5, dtype=torch.float64, generator=generator, requires_grad=True)
    b = torch.randn(4, 5, dtype=torch.float64, generator=generator, requires_grad=True)
    out = ref.pairwise_sq_distances(a, b)
    definition = ((a[:, None, :] - b[None, :, :]) ** 2).sum(-1)
    torch.testing.assert_close(out, definition)
    weights = torch.randn(7, 4, dtype=torch.float64, generator=generator)
    for got, want in zip(torch.autograd.grad((out * weights).sum(), (a, b)),
                         torch.autograd.grad((definition * weights).sum(), (a, b))):
        torch.testing.assert_close(got, want)
    near = torch.randn(100, 64, generator=generator) + 30
    unclamped = (near * near).sum(1, keepdim=True) - 2 * near @ near.T + (near * near).sum(1)
    assert (unclamped < 0).any(), "the test data must be where rounding goes below 0"
    assert (ref.pairwise_sq_distances(near, near) >= 0).all()


@pytest.mark.parametrize("shape, patch", [((2, 3, 4, 6), 1), ((2, 3, 4, 6), 2), ((1, 2, 6, 3), 3)])
def test_pixels_as_rows_is_unfold_with_the_patch_as_kernel_and_stride(shape, patch):
    images = torch.randn(*shape)
    expected = torch.nn.functional.unfold(images, kernel_size=patch, stride=patch).transpose(1, 2)
    torch.testing.assert_close(ref.pixels_as_rows(images, patch), expected, rtol=0, atol=0)
