"""The reference custom Functions of 03_custom_functions, with PyTorch as the oracle (float64)."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
from notebook_solutions import solution_namespace

from helpers.reference.custom_functions import ReLU, Sigmoid, relu, sigmoid

NOTEBOOK = Path(__file__).resolve().parents[1] / "source" / "03_custom_functions" / "03_custom_functions.ipynb"


def away_from_zero(x: torch.Tensor, margin: float = 0.1) -> torch.Tensor:
    """x pushed at least `margin` away from 0, where ReLU has its kink (finite differences straddle it)."""
    return x + margin * torch.where(x >= 0, 1.0, -1.0).to(x.dtype)


def upstream_gradient(fn, x: torch.Tensor, grad_y: torch.Tensor) -> torch.Tensor:
    """dL/dx for L = sum(fn(x) * grad_y), by autograd."""
    x = x.detach().clone().requires_grad_(True)
    (grad_x,) = torch.autograd.grad(fn(x), x, grad_y)
    return grad_x


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_sigmoid_forward_matches_torch(dtype):
    x = torch.linspace(-20, 20, 41, dtype=dtype)
    y = sigmoid(x)
    assert y.dtype == dtype
    torch.testing.assert_close(y, torch.sigmoid(x))


def test_sigmoid_backward_matches_torch_with_upstream_gradient():
    gen = torch.Generator().manual_seed(0)
    x = torch.randn(3, 4, 5, generator=gen, dtype=torch.float64)
    grad_y = torch.randn(3, 4, 5, generator=gen, dtype=torch.float64)
    torch.testing.assert_close(upstream_gradient(sigmoid, x, grad_y), upstream_gradient(torch.sigmoid, x, grad_y))


def test_sigmoid_gradcheck():
    x = torch.randn(4, 3, dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(Sigmoid.apply, (x,))


def test_sigmoid_saves_its_output_only():
    x = torch.randn(6, dtype=torch.float64, requires_grad=True)
    y = Sigmoid.apply(x)
    (saved,) = y.grad_fn.saved_tensors
    assert torch.equal(saved, y)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_relu_forward_matches_torch(dtype):
    x = torch.linspace(-3, 3, 13, dtype=dtype)  # includes 0
    y = relu(x)
    assert y.dtype == dtype
    torch.testing.assert_close(y, torch.relu(x))


def test_relu_backward_matches_torch_including_the_kink():
    gen = torch.Generator().manual_seed(1)
    x = torch.randn(5, 6, generator=gen, dtype=torch.float64)
    x[0, :3] = 0.0  # torch.relu passes no gradient at exactly 0; the reference does the same
    grad_y = torch.randn(5, 6, generator=gen, dtype=torch.float64)
    torch.testing.assert_close(upstream_gradient(relu, x, grad_y), upstream_gradient(torch.relu, x, grad_y))


def test_relu_gradcheck_away_from_the_kink():
    x = away_from_zero(torch.randn(4, 3, dtype=torch.float64)).requires_grad_(True)
    assert torch.autograd.gradcheck(ReLU.apply, (x,))


def test_relu_saves_its_input_only():
    x = torch.randn(6, dtype=torch.float64, requires_grad=True)
    y = ReLU.apply(x)
    (saved,) = y.grad_fn.saved_tensors
    assert torch.equal(saved, x)


@pytest.mark.parametrize("fn, function_class", [(sigmoid, Sigmoid), (relu, ReLU)])
def test_wrapper_adds_exactly_one_node(fn, function_class):
    x = torch.randn(5, dtype=torch.float64, requires_grad=True)
    y = fn(x)  # held: a custom Function's node lives as long as its output (torch 2.2)
    node = y.grad_fn
    assert type(node).__name__ == f"{function_class.__name__}Backward"
    (next_node, _), = node.next_functions
    assert next_node.variable is x  # the node's only input is x's AccumulateGrad: one node in between


def test_composed_sigmoid_has_several_nodes():
    """The contrast the notebook shows: 1 / (1 + exp(-x)) written out leaves one node per operation."""
    x = torch.randn(5, dtype=torch.float64, requires_grad=True)
    node, names = (1.0 / (1.0 + torch.exp(-x))).grad_fn, []
    while node is not None and type(node).__name__ != "AccumulateGrad":
        names.append(type(node).__name__)
        node = node.next_functions[0][0]
    assert {"NegBackward0", "ExpBackward0", "AddBackward0"} <= set(names) and len(names) >= 4


def test_gradcheck_rejects_a_wrong_derivative():
    """The oracle can fail: gradcheck rejects sigmoid with the derivative s * (1 + s)."""

    class WrongSigmoid(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            y = torch.sigmoid(x)
            ctx.save_for_backward(y)
            return y

        @staticmethod
        def backward(ctx, grad_y):
            (y,) = ctx.saved_tensors
            return grad_y * y * (1 + y)

    x = torch.randn(4, dtype=torch.float64, requires_grad=True)
    assert not torch.autograd.gradcheck(WrongSigmoid.apply, (x,), raise_exception=False)


@pytest.mark.skipif(not NOTEBOOK.exists(), reason="the 03 source notebook is not there yet")
def test_source_notebook_solution_agrees_with_the_reference():
    ns = solution_namespace(NOTEBOOK)
    gen = torch.Generator().manual_seed(7)
    x = away_from_zero(torch.randn(4, 5, generator=gen, dtype=torch.float64))
    grad_y = torch.randn(4, 5, generator=gen, dtype=torch.float64)
    for name in ("sigmoid", "relu"):
        ours, theirs = ns[name], globals()[name]
        torch.testing.assert_close(ours(x), theirs(x))
        torch.testing.assert_close(upstream_gradient(ours, x, grad_y), upstream_gradient(theirs, x, grad_y))


# -- LayerNorm, and the tiny engine (Value, backward) -----------------------------------------------------


def test_layernorm_matches_torch_forward_and_backward_on_3d_float64():
    from helpers.reference.custom_functions import LayerNorm

    gen = torch.Generator().manual_seed(11)
    x = torch.randn(2, 3, 6, generator=gen, dtype=torch.float64, requires_grad=True)
    gamma = torch.randn(6, generator=gen, dtype=torch.float64, requires_grad=True)
    beta = torch.randn(6, generator=gen, dtype=torch.float64, requires_grad=True)
    grad_y = torch.randn(2, 3, 6, generator=gen, dtype=torch.float64)
    y = LayerNorm.apply(x, gamma, beta, 1e-3)
    want = torch.nn.functional.layer_norm(x, (6,), gamma, beta, 1e-3)
    torch.testing.assert_close(y, want)
    for got, expected in zip(torch.autograd.grad(y, (x, gamma, beta), grad_y),
                             torch.autograd.grad(want, (x, gamma, beta), grad_y)):
        torch.testing.assert_close(got, expected)
    assert torch.autograd.gradcheck(lambda x, g, b: LayerNorm.apply(x, g, b, 1e-2), (x, gamma, beta))


def test_layernorm_keeps_eps_inside_the_root_on_a_row_of_tiny_variance():
    from helpers.reference.custom_functions import LayerNorm

    x = 5.0 + 1e-3 * torch.randn(3, 5, dtype=torch.float64)
    gamma, beta = torch.ones(5, dtype=torch.float64), torch.zeros(5, dtype=torch.float64)
    torch.testing.assert_close(LayerNorm.apply(x, gamma, beta, 1e-5),
                               torch.nn.functional.layer_norm(x, (5,), gamma, beta, 1e-5))


def test_layernorm_normalizes_a_single_row():
    """x of shape (D,), no leading dimension (issue 38, 3; before: grad_gamma was summed with sum(dim=()), over
    every dimension, and autograd refused it: 'returned an invalid gradient at index 1 - got [] but expected
    shape compatible with [6]')."""
    from helpers.reference.custom_functions import LayerNorm

    x, gamma, beta = (torch.randn(6, dtype=torch.float64, requires_grad=True) for _ in range(3))
    torch.testing.assert_close(LayerNorm.apply(x, gamma, beta, 1e-3),
                               torch.nn.functional.layer_norm(x, (6,), gamma, beta, 1e-3))
    assert torch.autograd.gradcheck(lambda x, g, b: LayerNorm.apply(x, g, b, 1e-3), (x, gamma, beta))


def test_engine_undoes_broadcasting_on_either_side_and_over_several_added_dimensions():
    import numpy as np

    from helpers.reference.custom_functions import Value, backward

    rng = np.random.default_rng(6)
    arrays = [rng.standard_normal(s) for s in ((6,), (3, 6), (2, 1, 1))]
    values = [Value(a) for a in arrays]
    backward(((values[0] + values[1]) * values[2]).sum())
    tensors = [torch.tensor(a, requires_grad=True) for a in arrays]
    ((tensors[0] + tensors[1]) * tensors[2]).sum().backward()
    for v, t in zip(values, tensors):
        np.testing.assert_allclose(v.grad, t.grad.numpy(), rtol=1e-10, atol=1e-12)


def _mlp(value, arrays):
    x, y, w1, b1, w2 = (value(a) for a in arrays)
    d = (x @ w1 + b1).relu() @ w2 - y
    return (d * d).sum(), (x, y, w1, b1, w2)


def test_engine_gives_pytorchs_gradients_on_an_mlp_with_biases():
    import numpy as np

    from helpers.reference.custom_functions import Value, backward

    rng = np.random.default_rng(5)
    arrays = [rng.standard_normal(s) for s in ((6, 4), (6, 2), (4, 5), (5,), (5, 2))]
    loss, values = _mlp(Value, arrays)
    backward(loss)
    tensors = [torch.tensor(a, requires_grad=True) for a in arrays]
    d = (tensors[0] @ tensors[2] + tensors[3]).relu() @ tensors[4] - tensors[1]
    (d * d).sum().backward()
    for v, t in zip(values, tensors):
        np.testing.assert_allclose(v.grad, t.grad.numpy(), rtol=1e-10, atol=1e-12)


def test_engine_adds_at_fan_out_and_unbroadcasts_a_stretched_dimension():
    import numpy as np

    from helpers.reference.custom_functions import Value, backward

    a = Value(np.array([[1.0, -2.0], [3.0, 0.5]]))
    c = Value(np.array([[2.0], [-1.0]]))  # (2, 1): stretched along the columns
    out = (a * a + a * c).sum()
    backward(out)
    np.testing.assert_allclose(a.grad, 2 * a.data + c.data)
    np.testing.assert_allclose(c.grad, a.data.sum(axis=1, keepdims=True))
    assert c.grad.shape == (2, 1)


def test_backward_runs_each_node_once_on_a_deep_chain():
    import numpy as np

    from helpers.reference.custom_functions import Value, backward

    v = x = Value(np.array(1.5))
    for _ in range(3000):  # deeper than Python's recursion limit: the sweep is iterative
        v = v * 1.0 + 0.0
    backward(v)
    assert float(x.grad) == 1.0


@pytest.mark.skipif(not NOTEBOOK.exists(), reason="the 03 source notebook is not there yet")
def test_source_notebook_layernorm_and_engine_agree_with_the_reference():
    import numpy as np

    from helpers.reference.custom_functions import LayerNorm, Value

    ns = solution_namespace(NOTEBOOK, imports="import numpy as np\n")
    gen = torch.Generator().manual_seed(8)
    x, gamma, beta = (torch.randn(*s, generator=gen, dtype=torch.float64, requires_grad=True) for s in ((3, 4), (4,), (4,)))
    grad_y = torch.randn(3, 4, generator=gen, dtype=torch.float64)
    for ours, theirs in zip(torch.autograd.grad(ns["LayerNorm"].apply(x, gamma, beta, 1e-5), (x, gamma, beta), grad_y),
                            torch.autograd.grad(LayerNorm.apply(x, gamma, beta, 1e-5), (x, gamma, beta), grad_y)):
        torch.testing.assert_close(ours, theirs)
    rng = np.random.default_rng(9)
    arrays = [rng.standard_normal(s) for s in ((5, 3), (5, 2), (3, 4), (4,), (4, 2))]
    grads = []
    for value in (ns["Value"], Value):
        loss, values = _mlp(value, arrays)
        ns["backward"](loss)
        grads.append([v.grad for v in values])
    for ours, theirs in zip(*grads):
        np.testing.assert_allclose(ours, theirs, rtol=1e-12)


# -- BatchNorm (issue 38, part 4) --------------------------------------------------------------------------------


@pytest.mark.parametrize("shape", [(8, 5), (4, 3, 5, 4), (6, 2, 7), (2, 3)])
def test_batchnorm_matches_torch_in_training_mode_with_its_running_statistics(shape):
    from helpers.reference.custom_functions import BatchNorm

    gen = torch.Generator().manual_seed(10)
    c = shape[1]
    x = (2 * torch.randn(*shape, generator=gen, dtype=torch.float64) + 1).requires_grad_(True)
    gamma, beta = (torch.randn(c, generator=gen, dtype=torch.float64).requires_grad_(True) for _ in range(2))
    mine = [torch.randn(c, generator=gen, dtype=torch.float64), torch.rand(c, generator=gen, dtype=torch.float64) + 0.5]
    theirs = [t.clone() for t in mine]
    y = BatchNorm.apply(x, gamma, beta, *mine, 0.3, 1e-3)
    want = torch.nn.functional.batch_norm(x, *theirs, gamma, beta, training=True, momentum=0.3, eps=1e-3)
    torch.testing.assert_close(y, want)
    torch.testing.assert_close(mine, theirs)  # the running mean, and the unbiased variance's average
    grad_y = torch.randn(*shape, generator=gen, dtype=torch.float64)
    torch.testing.assert_close(torch.autograd.grad(y, (x, gamma, beta), grad_y),
                               torch.autograd.grad(want, (x, gamma, beta), grad_y))
    assert torch.autograd.gradcheck(lambda x, g, b: BatchNorm.apply(x, g, b, None, None, 0.1, 1e-2), (x, gamma, beta))


def test_batchnorm_backward_returns_none_for_the_running_statistics_momentum_and_eps():
    from helpers.reference.custom_functions import BatchNorm

    x = torch.randn(4, 3, dtype=torch.float64, requires_grad=True)
    gamma, beta = torch.ones(3, dtype=torch.float64, requires_grad=True), torch.zeros(3, dtype=torch.float64)
    y = BatchNorm.apply(x, gamma, beta, torch.zeros(3, dtype=torch.float64), torch.ones(3, dtype=torch.float64), 0.1,
                        1e-5)
    grads = BatchNorm.backward(y.grad_fn, torch.ones(4, 3, dtype=torch.float64))
    assert len(grads) == 7 and all(g is None for g in grads[3:])


@pytest.mark.skipif(not NOTEBOOK.exists(), reason="the 03 source notebook is not there yet")
def test_source_notebook_batchnorm_agrees_with_the_reference():
    from helpers.reference.custom_functions import BatchNorm

    ns = solution_namespace(NOTEBOOK)
    gen = torch.Generator().manual_seed(11)
    x, gamma, beta = (torch.randn(*s, generator=gen, dtype=torch.float64, requires_grad=True)
                      for s in ((4, 3, 2, 5), (3,), (3,)))
    grad_y = torch.randn(4, 3, 2, 5, generator=gen, dtype=torch.float64)
    stats = [[torch.zeros(3, dtype=torch.float64), torch.ones(3, dtype=torch.float64)] for _ in range(2)]
    outs = [function.apply(x, gamma, beta, *running, 0.2, 1e-4) for function, running in
            zip((ns["BatchNorm"], BatchNorm), stats)]
    torch.testing.assert_close(outs[0], outs[1])
    torch.testing.assert_close(stats[0], stats[1])
    torch.testing.assert_close(*(torch.autograd.grad(y, (x, gamma, beta), grad_y) for y in outs))
