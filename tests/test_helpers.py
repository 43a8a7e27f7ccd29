"""Unit tests of the helpers the notebooks import: checks, data, device, setup and plotting."""

import importlib.util
import os
import random
import subprocess
import sys

import matplotlib

matplotlib.use("Agg")  # no screen in CI

import matplotlib.pyplot as plt
import numpy as np
import pytest
import torch

from helpers import checks
from helpers.checks import (
    CheckFailed,
    check_close,
    check_equal,
    check_gradcheck,
    check_gradients_match_autograd,
    check_no_grad_left,
    check_relative_error,
    check_shape,
    check_true,
    check_type,
    passed,
    relative_error_of,
    summary,
)
from helpers.data import D_IN, D_OUT, H, N, digits, mlp_problem
from helpers.device import describe_device, pick_device
from helpers.plotting import plot_history, plot_losses
from helpers.setup import seed_everything, setup

# --- checks ---------------------------------------------------------------------------------------


def test_check_failed_is_an_assertion_error():
    """nbgrader scores a cell 0 on any exception; an AssertionError also reads right in plain pytest."""
    assert issubclass(CheckFailed, AssertionError)


def test_check_type_passes_and_fails_with_the_type_named():
    check_type(3.0, float, "x")
    check_type(np.zeros(2), (np.ndarray, torch.Tensor), "x")
    with pytest.raises(CheckFailed, match=r"x should be a float, but it is str 'a'"):
        check_type("a", float, "x")


def test_check_type_names_numpys_bool_apart_from_pythons():
    """NumPy 2 names np.bool_ 'bool': the message read 'should be a bool or bool' (issue 38, 3)."""
    with pytest.raises(CheckFailed, match=r"x should be a bool or a NumPy bool, but it is str 'yes'"):
        check_type("yes", (bool, np.bool_), "x")
    with pytest.raises(CheckFailed, match=r"should be a torch\.Tensor or a NumPy array"):
        check_type([1.0], (torch.Tensor, np.ndarray), "x")


def test_check_type_does_not_take_a_bool_for_a_number():
    with pytest.raises(CheckFailed, match="should be an int"):
        check_type(True, int, "count")
    check_type(True, bool, "flag")


def test_check_shape_passes_on_the_right_shape():
    check_shape(np.zeros((2, 3)), (2, 3), "a")
    check_shape(torch.zeros(2, 3), [2, 3], "t")


def test_check_shape_suggests_a_missing_transpose():
    with pytest.raises(CheckFailed) as failure:
        check_shape(np.zeros((100, 1000)), (1000, 100), "grad_w1")
    message = str(failure.value)
    assert "grad_w1 has shape (100, 1000); expected (1000, 100)." in message
    assert "did you forget a transpose?" in message


def test_check_shape_names_a_layout_mistake_and_a_non_array():
    with pytest.raises(CheckFailed, match="same number of elements, different layout"):
        check_shape(np.zeros((6,)), (2, 3), "x")
    with pytest.raises(CheckFailed, match=r"x should be an array or a tensor of shape \(2, 3\), but it is list"):
        check_shape([[0, 0, 0], [0, 0, 0]], (2, 3), "x")


def test_check_shape_keeps_a_given_hint():
    with pytest.raises(CheckFailed, match="Hint: multiply the other way round"):
        check_shape(np.zeros((3, 2)), (2, 3), "x", hint="multiply the other way round")


def test_check_close_passes_across_arrays_and_tensors():
    check_close(np.array([1.0, 2.0]), torch.tensor([1.0, 2.0]), "x")
    check_close(torch.tensor([1.0, 2.0], requires_grad=True), np.array([1.0, 2.0 + 1e-9]), "x")
    check_close(2.0, 2.0, "x")


def test_check_close_reports_the_first_mismatch_and_the_hint():
    with pytest.raises(CheckFailed) as failure:
        check_close(np.array([[1.0, 2.0], [3.0, 4.0]]), np.array([[1.0, 2.5], [3.0, 4.0]]), "y_pred",
                    hint="check the relu")
    message = str(failure.value)
    assert "1 of 4 elements differ" in message
    assert "First mismatch at index (0, 1): got 2, expected 2.5." in message
    assert message.endswith("Hint: check the relu")


def test_check_close_fails_on_shape_nan_and_scalars():
    with pytest.raises(CheckFailed, match=r"has shape \(3,\); expected \(2,\)"):
        check_close(np.zeros(3), np.zeros(2), "x")
    with pytest.raises(CheckFailed, match="NaN or infinity"):
        check_close(np.array([np.nan]), np.array([1.0]), "x")
    with pytest.raises(CheckFailed, match="Got 3, expected 14"):
        check_close(3.0, 14.0, "loss")


def test_relative_error_of():
    assert relative_error_of(np.array([1.0, 2.0]), np.array([1.0, 2.0])) == 0.0
    assert relative_error_of(np.zeros(3), np.zeros(3)) == 0.0
    assert relative_error_of(np.array([1.0]), np.array([2.0])) == pytest.approx(1 / 3)
    assert relative_error_of(np.array([-1.0]), np.array([-3.0])) == pytest.approx(0.5)


def test_check_relative_error_passes_and_fails():
    expected = np.array([1.0, -2.0, 3.0])
    check_relative_error(expected * (1 + 1e-9), expected, "grad")
    with pytest.raises(CheckFailed, match=r"grad: relative error 3\.3\de-01 .* must be below 1e-06"):
        check_relative_error(expected / 2, expected, "grad")


def test_check_equal_passes_and_fails():
    check_equal([1, 2], [1, 2], "xs")
    with pytest.raises(CheckFailed, match="flag is False; expected True."):
        check_equal(False, True, "flag")
    with pytest.raises(CheckFailed, match="should be the bool True, but it is int 1"):
        check_equal(1, True, "flag")


def test_check_equal_refuses_objects_that_equal_everything():
    class Always:
        def __eq__(self, other):
            return True

    with pytest.raises(CheckFailed):
        check_equal(Always(), True, "answer")


def test_check_true_takes_only_true():
    check_true(True, "never shown")
    check_true(np.bool_(True), "never shown")
    check_true(torch.tensor(True), "never shown")
    with pytest.raises(CheckFailed, match="the loss went up"):
        check_true(False, "the loss went up")
    with pytest.raises(CheckFailed):
        check_true(1, "a 1 is not True")


def mlp_loss(x, y, w1, w2):
    return ((torch.relu(x @ w1) @ w2 - y) ** 2).sum()


def test_check_gradients_match_autograd_passes_on_autograd_gradients():
    x, y, w1, w2 = mlp_problem(0, n=5, d_in=4, h=3, d_out=2)
    leaves = [torch.tensor(a, requires_grad=True) for a in (w1, w2)]
    grads = torch.autograd.grad(mlp_loss(torch.from_numpy(x), torch.from_numpy(y), *leaves), leaves)
    check_gradients_match_autograd(mlp_loss, {"x": x, "y": y, "w1": w1, "w2": w2},
                                   {"w1": grads[0].numpy(), "w2": grads[1].numpy()})


def test_check_gradients_match_autograd_fails_with_hints():
    x, y, w1, w2 = mlp_problem(0, n=5, d_in=4, h=3, d_out=2)
    inputs = {"x": x, "y": y, "w1": w1, "w2": w2}
    with pytest.raises(CheckFailed, match="did you forget a transpose"):
        check_gradients_match_autograd(mlp_loss, inputs, {"w1": np.zeros((3, 4))})
    with pytest.raises(CheckFailed, match="gradient of the loss with respect to w2: relative error .*\nHint: factor 2"):
        check_gradients_match_autograd(mlp_loss, inputs, {"w2": np.ones((3, 2))}, hints={"w2": "factor 2"})


def test_check_gradients_match_autograd_needs_a_scalar_loss():
    with pytest.raises(TypeError, match="scalar"):
        check_gradients_match_autograd(lambda a: a * 2, {"a": np.ones(3)}, {"a": np.ones(3)})


class Square(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        return 2 * x * grad_output


class WrongSquare(Square):
    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        return x * grad_output  # the factor 2 is missing


def test_check_gradcheck_passes_a_right_backward_and_fails_a_wrong_one():
    x = torch.randn(4, dtype=torch.float64, requires_grad=True)
    check_gradcheck(Square.apply, [x], "Square")
    with pytest.raises(CheckFailed, match="WrongSquare: gradcheck failed"):
        check_gradcheck(WrongSquare.apply, [x], "WrongSquare")


def test_check_gradcheck_refuses_float32():
    with pytest.raises(TypeError, match="float64"):
        check_gradcheck(Square.apply, [torch.randn(3, requires_grad=True)], "Square")


def test_check_no_grad_left():
    w = torch.ones(3, requires_grad=True)
    check_no_grad_left({"w": w})
    w.grad = torch.zeros(3)
    check_no_grad_left({"w": w})
    w.grad = torch.ones(3)
    with pytest.raises(CheckFailed, match=r"w\.grad is not empty after your function returned"):
        check_no_grad_left({"w": w})


def test_passed_and_summary(capsys, monkeypatch):
    monkeypatch.setattr(checks, "_outcomes", {})
    passed("relu")
    assert "relu: the visible checks pass" in capsys.readouterr().out
    assert summary({"relu": 2, "mlp_backward": 4}) is None  # a notebook's last cell shows the table once
    out = capsys.readouterr().out
    assert "Visible checks passed for 1 of 2 exercises (2 of 6 points at stake)." in out
    assert out.count("mlp_backward") == 1 and "not run yet" in out
    assert checks.visible_results({"relu": 2, "mlp_backward": 4}) == {"relu": True, "mlp_backward": False}


# --- data -----------------------------------------------------------------------------------------


def test_mlp_problem_has_the_lecture_shapes():
    x, y, w1, w2 = mlp_problem()
    assert (N, D_IN, H, D_OUT) == (64, 1000, 100, 10)
    assert [a.shape for a in (x, y, w1, w2)] == [(64, 1000), (64, 10), (1000, 100), (100, 10)]
    assert all(a.dtype == np.float64 for a in (x, y, w1, w2))


def test_mlp_problem_is_seeded():
    first, again, other = mlp_problem(3, 4, 5, 6, 2), mlp_problem(3, 4, 5, 6, 2), mlp_problem(4, 4, 5, 6, 2)
    for a, b in zip(first, again):
        np.testing.assert_array_equal(a, b)
    assert not np.array_equal(first[0], other[0])


def test_mlp_problem_does_not_touch_the_global_generator():
    np.random.seed(0)
    expected = np.random.rand()
    np.random.seed(0)
    mlp_problem(1)
    assert np.random.rand() == expected


def test_mlp_problem_dtype():
    assert all(a.dtype == np.float32 for a in mlp_problem(0, 2, 3, 4, 5, dtype=np.float32))


def test_digits_is_offline_and_normalized():
    x, y = digits()
    assert x.shape == (1797, 64) and x.dtype == np.float32 and 0.0 <= x.min() and x.max() <= 1.0
    assert y.shape == (1797,) and y.dtype == np.int64 and set(np.unique(y)) == set(range(10))
    assert digits(normalize=False)[0].max() == 16.0


@pytest.mark.parametrize("found", [True, False], ids=["file-read-directly", "load_digits"])
def test_digits_are_scikit_learns_whichever_way_they_are_read(found, monkeypatch):
    from sklearn.datasets import load_digits

    if not found:  # scikit-learn keeps its file elsewhere: its own loader is used
        monkeypatch.setattr(importlib.util, "find_spec", lambda name: None)
    bunch = load_digits()
    for normalize, scale in ((False, 1.0), (True, 16.0)):
        x, y = digits(normalize=normalize)
        np.testing.assert_array_equal(x, (bunch.data / scale).astype(np.float32))
        np.testing.assert_array_equal(y, bunch.target)


def test_loading_the_digits_imports_neither_scikit_learn_nor_scipy():
    """Every kernel of 04, 06 and 07 loads them: importing sklearn.datasets costs ~1.4 s there."""
    code = ("import sys; from helpers.data import digits; digits(); "
            "print(sorted(m for m in ('sklearn', 'scipy') if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]", done.stdout + done.stderr


# --- device ---------------------------------------------------------------------------------------


def test_pick_device_returns_an_available_device():
    device = pick_device()
    assert isinstance(device, torch.device)
    torch.zeros(1, device=device)  # usable
    assert pick_device("cpu") == torch.device("cpu")


@pytest.mark.skipif(torch.cuda.is_available(), reason="CUDA is present here")
def test_pick_device_refuses_missing_cuda():
    with pytest.raises(RuntimeError, match="CUDA was asked for"):
        pick_device("cuda")


def test_describe_device_cpu():
    assert describe_device(torch.device("cpu")).startswith("Using CPU")


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
def test_pick_and_describe_cuda():
    assert pick_device().type == "cuda"
    assert describe_device(torch.device("cuda")).startswith("Using GPU: ")


# --- setup ----------------------------------------------------------------------------------------


def draws():
    return random.random(), float(np.random.rand()), float(torch.rand(1))


def test_seed_everything_repeats_every_generator():
    seed_everything(7)
    first = draws()
    seed_everything(7)
    assert draws() == first
    seed_everything(8)
    assert draws() != first


def test_seed_everything_leaves_pythonhashseed_alone(monkeypatch):
    """Hash randomization is fixed when the interpreter starts: setting it later would only mislead."""
    monkeypatch.delenv("PYTHONHASHSEED", raising=False)
    seed_everything(3)
    assert "PYTHONHASHSEED" not in os.environ


def test_setup_returns_the_device_and_says_which(capsys):
    device = setup(seed=1)
    assert device == pick_device()
    assert capsys.readouterr().out.startswith("Using ")
    assert setup(seed=1, device="cpu", quiet=True) == torch.device("cpu")
    assert capsys.readouterr().out == ""


@pytest.fixture
def restore_determinism(monkeypatch):
    """Each test leaves PyTorch's global switches as it found them."""
    monkeypatch.delenv("CUBLAS_WORKSPACE_CONFIG", raising=False)
    state = (torch.are_deterministic_algorithms_enabled(), torch.is_deterministic_algorithms_warn_only_enabled(),
             torch.backends.cudnn.benchmark, torch.backends.cudnn.deterministic)
    yield
    torch.use_deterministic_algorithms(state[0], warn_only=state[1])
    torch.backends.cudnn.benchmark, torch.backends.cudnn.deterministic = state[2], state[3]


def test_setup_silences_the_profilers_warning_about_cycles():
    """torch.profiler's "clears events at the end of each cycle" (torch 2.11 on an H200, in 08's test_profile_step)
    went to stderr, which nbgrader's validator counts against a right answer's test cell."""
    import warnings

    said = ("Warning: Profiler clears events at the end of each cycle.Only events from the current cycle will be "
            "reported.To keep events across cycles, set acc_events=True.")
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        setup(seed=1, quiet=True)
        warnings.warn(said, UserWarning, stacklevel=1)
        warnings.warn("another warning", UserWarning, stacklevel=1)
    assert [str(w.message) for w in seen] == ["another warning"]


def test_setup_is_not_deterministic_unless_asked(restore_determinism):
    torch.use_deterministic_algorithms(False)
    setup(seed=1, quiet=True)
    assert not torch.are_deterministic_algorithms_enabled()
    assert "CUBLAS_WORKSPACE_CONFIG" not in os.environ


def test_setup_deterministic_sets_every_switch(restore_determinism, monkeypatch):
    torch.backends.cudnn.benchmark = True
    monkeypatch.setattr(torch.cuda, "is_initialized", lambda: False)
    setup(seed=1, quiet=True, deterministic=True)
    assert torch.are_deterministic_algorithms_enabled()
    assert torch.is_deterministic_algorithms_warn_only_enabled()  # an op without a deterministic kernel warns
    assert torch.backends.cudnn.benchmark is False and torch.backends.cudnn.deterministic is True
    assert os.environ["CUBLAS_WORKSPACE_CONFIG"] == ":4096:8"


def test_setup_deterministic_keeps_a_users_cublas_setting(restore_determinism, monkeypatch):
    monkeypatch.setenv("CUBLAS_WORKSPACE_CONFIG", ":16:8")
    setup(seed=1, quiet=True, deterministic=True)
    assert os.environ["CUBLAS_WORKSPACE_CONFIG"] == ":16:8"


def test_setup_deterministic_after_cuda_started_says_it_is_too_late(restore_determinism, monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_initialized", lambda: True)
    with pytest.warns(UserWarning, match="CUDA has already started"):
        setup(seed=1, quiet=True, deterministic=True)


# --- plotting -------------------------------------------------------------------------------------


def test_plot_losses_one_curve():
    ax = plot_losses([3.0, 2.0, 1.0], title="loss")
    assert ax.get_yscale() == "log" and ax.get_title() == "loss"
    assert len(ax.get_lines()) == 1 and ax.get_legend() is None
    np.testing.assert_array_equal(ax.get_lines()[0].get_ydata(), [3.0, 2.0, 1.0])
    plt.close("all")


def test_plot_losses_several_curves_on_given_axes():
    _, ax = plt.subplots()
    returned = plot_losses({"a": [1.0, 0.5], "b": np.array([2.0, 1.0])}, log_scale=False, ax=ax)
    assert returned is ax and ax.get_yscale() == "linear"
    assert [line.get_label() for line in ax.get_lines()] == ["a", "b"] and ax.get_legend() is not None
    plt.close("all")


def test_plot_losses_accepts_tensors():
    ax = plot_losses([torch.tensor(2.0), torch.tensor(1.0)])
    assert list(ax.get_lines()[0].get_ydata()) == [2.0, 1.0]
    plt.close("all")


def test_plot_history_splits_losses_from_metrics():
    fig = plot_history({"train_loss": [1.0, 0.5], "val_loss": [1.2, 0.7], "val_accuracy": [0.5, 0.8]})
    assert len(fig.axes) == 2
    assert [line.get_label() for line in fig.axes[0].get_lines()] == ["train_loss", "val_loss"]
    assert [line.get_label() for line in fig.axes[1].get_lines()] == ["val_accuracy"]
    assert len(plot_history({"train_loss": [1.0]}).axes) == 1
    plt.close("all")


def test_check_close_takes_a_python_number_against_a_0d_tensor():
    from helpers.checks import CheckFailed, check_close, check_relative_error

    check_close(2.5, torch.tensor(2.5, dtype=torch.float64), "loss")
    check_close(np.float32(2.5), np.array(2.5), "loss")
    check_relative_error(2.5, torch.tensor(2.5), "loss")
    with pytest.raises(CheckFailed, match="loss does not match"):
        check_close(2.0, torch.tensor(2.5), "loss")
    with pytest.raises(CheckFailed, match="shape"):
        check_close(2.5, torch.tensor([2.5]), "loss")


def test_a_recorded_answer_is_not_counted_as_passed(capsys, monkeypatch):
    monkeypatch.setattr(checks, "_outcomes", {})
    checks.answer_recorded("answer_is_leaf")
    assert "answer recorded (form OK)" in capsys.readouterr().out
    passed("relu")
    assert summary({"relu": 2, "answer_is_leaf": 1}) is None
    out = capsys.readouterr().out
    assert checks.visible_results({"relu": 2, "answer_is_leaf": 1}) == {"relu": True, "answer_is_leaf": False}
    assert "answer recorded, graded by the hidden tests" in out
    assert "Visible checks passed for 1 of 2 exercises (2 of 3 points at stake); 1 answer(s) recorded" in out
