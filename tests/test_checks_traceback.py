"""A failed check, or an error PyTorch raises in the student's code, shows the student's line and the message
(and the course's hint for a known mistake), not the frames of helpers/checks.py or torch/.

Every function of helpers.checks that is on the stack when a check fails sets `__tracebackhide__`;
`CheckFailed._render_traceback_` (IPython's hook) leaves those frames out.
"""

from __future__ import annotations

import ast
import re
import traceback
from pathlib import Path

import nbformat
import numpy as np
import pytest
import torch

from autograder.course import grading_folder
from helpers import checks
from helpers.checks import CheckFailed

# One failing call of each check, as a test cell would make it.
FAILURES = {
    "check_type": lambda: checks.check_type("a", float, "x"),
    "check_shape": lambda: checks.check_shape(np.zeros((3, 2)), (2, 3), "x"),
    "check_close": lambda: checks.check_close(np.ones(2), np.zeros(2), "x"),
    "check_close on a non-array": lambda: checks.check_close(object(), 1.0, "x"),
    "check_relative_error": lambda: checks.check_relative_error(np.ones(2), -np.ones(2), "x"),
    "check_equal": lambda: checks.check_equal(1, 2, "x"),
    "check_true": lambda: checks.check_true(False, "x is wrong"),
    "check_gradients_match_autograd": lambda: checks.check_gradients_match_autograd(
        lambda w: (w ** 2).sum(), {"w": np.ones(2)}, {"w": np.zeros(2)}),
    "check_gradcheck": lambda: checks.check_gradcheck(
        lambda x: x.detach() * 2 + x * 0, [torch.ones(2, dtype=torch.float64, requires_grad=True)], "f"),
    "check_no_grad_left": lambda: checks.check_no_grad_left({"w": _with_grad()}),
}


def _with_grad():
    w = torch.ones(2, requires_grad=True)
    w.grad = torch.ones(2)
    return w


def _plain(lines) -> str:
    """Traceback lines as text, without the ANSI colour codes IPython adds."""
    return re.sub(r"\x1b\[[0-9;]*m", "", "\n".join(lines))


def _raised(call) -> CheckFailed:
    with pytest.raises(CheckFailed) as failure:
        call()
    return failure.value


@pytest.mark.parametrize("name", FAILURES)
def test_every_frame_of_checks_py_on_a_failure_is_hidden(name):
    error = _raised(FAILURES[name])
    frames = [(tb.tb_frame, tb.tb_frame.f_code.co_filename) for tb in _walk(error.__traceback__)]
    in_checks = [frame for frame, filename in frames if filename == checks.__file__]
    assert in_checks, "the failure should come from helpers/checks.py"
    for frame in in_checks:
        assert frame.f_locals.get("__tracebackhide__") is True, \
            f"{frame.f_code.co_name} in helpers/checks.py does not set __tracebackhide__ = True"


def _walk(tb):
    while tb is not None:
        yield tb
        tb = tb.tb_next


def test_without_hidden_frames_keeps_the_callers_frames_only():
    error = _raised(FAILURES["check_shape"])
    kept = list(_walk(checks.without_hidden_frames(error.__traceback__)))
    assert [tb.tb_frame.f_code.co_filename for tb in kept] == [__file__, __file__]  # _raised, the lambda
    assert len(list(_walk(error.__traceback__))) > len(kept)  # the original chain is left as it was


def test_outside_ipython_the_rendering_is_plain_python_without_checks_py(monkeypatch):
    monkeypatch.setattr("IPython.get_ipython", lambda: None)  # whatever shell an earlier test left
    text = "".join(checks.render_without_hidden_frames(_raised(FAILURES["check_equal"])))
    assert "checks.py" not in text
    assert "x is 1; expected 2." in text and "check_equal(1, 2" in text


def test_in_ipython_a_failed_check_shows_the_cell_line_and_the_message(capsys):
    """IPython's own traceback display, in process: the cell's line, then the message; no helpers frame."""
    import builtins

    from IPython.core.interactiveshell import InteractiveShell

    added = {"__IPYTHON__", "display"} - set(vars(builtins))  # what the shell leaves in builtins
    shell = InteractiveShell.instance(colors="nocolor")
    try:
        shell.run_cell("import numpy as np\nfrom helpers.checks import check_shape\n"
                       "check_shape(np.zeros((2, 3)), (3, 2), 'grad_w2')  # my line")
    finally:
        InteractiveShell.clear_instance()
        for name in added:  # later tests must not believe they run inside IPython
            vars(builtins).pop(name, None)
    shown = _plain([capsys.readouterr().out])
    assert "check_shape(np.zeros((2, 3)), (3, 2), 'grad_w2')  # my line" in shown
    assert "CheckFailed: grad_w2 has shape (2, 3); expected (3, 2)." in shown
    assert "checks.py" not in shown and "skipping hidden" not in shown


# -- in a real Jupyter kernel (nbclient): the error outputs Jupyter and nbgrader show --------------------

ROOT = Path(__file__).resolve().parents[1]


def _class_source(path: Path, name: str) -> str:
    """The source of class `name` as written in the file at `path`."""
    text = path.read_text(encoding="utf-8")
    node = next(n for n in ast.parse(text).body if isinstance(n, ast.ClassDef) and n.name == name)
    return ast.get_source_segment(text, node)


SETUP = """\
import helpers
device = helpers.setup(quiet=True)
import numpy as np
import torch
from torch import nn
from helpers.checks import check_shape, check_true


{forward_mode_only}

a = torch.randn(3, 4, dtype=torch.float64)
x = torch.randn(3, dtype=torch.float64)
""".format(forward_mode_only=_class_source(  # 02's Function whose reverse mode is switched off, from its stand-ins
    grading_folder.folder(ROOT, "02_autograd") / grading_folder.GIVEN_FILE, "ForwardModeOnly"))

# name: (the student's cells, a line of theirs the error shows, the message, a phrase of the course's hint,
# at most this many lines). The first cell of each defines; the last one raises.
CASES = {
    "retain_graph": (
        ["def jacobian_reverse(f, x):\n    x = x.detach().requires_grad_()\n    y = f(x)\n"
         "    rows = [torch.autograd.grad(y[i], x)[0] for i in range(y.numel())]  # my line\n"
         "    return torch.stack(rows)",
         "jacobian_reverse(lambda t: torch.tanh(t @ a), x)"],
        "rows = [torch.autograd.grad(y[i], x)[0] for i in range(y.numel())]  # my line",
        "RuntimeError: Trying to backward through the graph a second time", "retain_graph=True", 8),
    "mode mix-up caught by a test cell": (
        ["def jacobian_forward(f, x):\n    return torch.autograd.functional.jacobian(f, x)  # my line",
         "try:\n    out = jacobian_forward(lambda t: ForwardModeOnly.apply(t, a), x)\n"
         "except RuntimeError as error:\n"
         "    check_true(False, f'jacobian_forward raised: {error}', hint='use Jacobian-vector products.')"],
        "return torch.autograd.functional.jacobian(f, x)  # my line",
        "CheckFailed: jacobian_forward raised: reverse mode is switched off", "use Jacobian-vector products.", 16),
    "train mode for one sample": (
        ["model = nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4))\n"
         "def predict_one(model, x):\n    return model(x[None]).argmax()  # my line",
         "predict_one(model, torch.ones(3))"],
        "return model(x[None]).argmax()  # my line",
        "ValueError: Expected more than 1 value per channel when training", "model.eval()", 8),
    "inference_mode then autograd": (
        ["with torch.inference_mode():\n    features = torch.ones(3)",
         "w = torch.ones(3, requires_grad=True)\n(features * w).sum().backward()  # my line"],
        "(features * w).sum().backward()  # my line",
        "RuntimeError: Inference tensors cannot be saved for backward", "torch.no_grad()", 6),
    "in-place change of a saved tensor": (
        ["def loss_of(x):\n    y = x.exp()\n    y += 1  # my line\n    return y.sum()",
         "loss_of(torch.ones(3, requires_grad=True)).backward()"],
        "loss_of(torch.ones(3, requires_grad=True)).backward()",
        "RuntimeError: one of the variables needed for gradient computation has been modified by an inplace",
        "out-of-place form", 6),
    "shapes of a matrix product": (
        ["def forward(x, w):\n    return x @ w  # my line", "forward(torch.ones(5, 3), torch.ones(4, 3))"],
        "return x @ w  # my line", "RuntimeError: mat1 and mat2 shapes cannot be multiplied (5x3 and 4x3)",
        "transpose", 7),
    "dtypes of a matrix product": (
        ["def forward(x, w):\n    return x @ w  # my line",
         "forward(torch.from_numpy(np.ones((5, 3))), torch.ones(3, 4))"],
        "return x @ w  # my line", "RuntimeError: expected m1 and m2 to have the same dtype", ".float()", 7),
}


@pytest.fixture(scope="module")
def kernel_outputs(tmp_path_factory):
    """One kernel runs every case: {name: (the error output of its last cell, the cell's source)}."""
    from nbclient import NotebookClient

    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(SETUP),
                nbformat.v4.new_code_cell("grad_w1 = np.zeros((100, 1000))\n"
                                          "check_shape(grad_w1, (1000, 100), 'grad_w1')  # the student's line"),
                nbformat.v4.new_code_cell("def relu(h):\n    return h.clamp(min=0)\nrelu([1.0])")]
    last = {"check": 1, "own bug": 2}
    for name, (cells, *_) in CASES.items():
        nb.cells += [nbformat.v4.new_code_cell(text) for text in cells]
        last[name] = len(nb.cells) - 1
    NotebookClient(nb, timeout=120, kernel_name="python3", allow_errors=True,
                   resources={"metadata": {"path": str(tmp_path_factory.mktemp("kernel"))}}).execute()
    assert not [o for o in nb.cells[0].outputs if o.output_type == "error"], nb.cells[0].outputs
    outputs = {}
    for name, index in last.items():
        errors = [o for o in nb.cells[index].outputs if o.output_type == "error"]
        assert len(errors) == 1, (name, nb.cells[index].outputs)
        outputs[name] = errors[0]
    return outputs


@pytest.mark.slow
def test_a_failed_check_in_a_notebook_shows_the_students_line_and_the_message(kernel_outputs):
    error = kernel_outputs["check"]
    shown = _plain(error.traceback)
    assert error.ename == "CheckFailed"
    assert "grad_w1 has shape (100, 1000); expected (1000, 100)." in shown
    assert "did you forget a transpose?" in shown
    assert "the student's line" in shown  # the cell's failing line is there
    assert "checks.py" not in shown and "_fail" not in shown
    assert len(shown.splitlines()) <= 5
    # Other errors keep IPython's full view: a student's own bug, in their cells only, is not rewritten.
    other = kernel_outputs["own bug"]
    assert other.ename == "AttributeError" and "h.clamp(min=0)" in _plain(other.traceback)
    assert "Traceback (most recent call last)" in _plain(other.traceback)


@pytest.mark.slow
@pytest.mark.parametrize("name", CASES)
def test_a_torch_error_in_the_students_code_shows_their_line_the_message_and_the_hint(kernel_outputs, name):
    """In a few lines: the student's line, PyTorch's message, the course's hint; no frame of torch/ or helpers/."""
    _, line, message, hint, most = CASES[name]
    shown = _plain(kernel_outputs[name].traceback)
    lines = shown.splitlines()
    assert line in shown, shown
    assert message in shown, shown
    hints = [text for text in lines if text.startswith("Hint: ")]
    assert hints and hint in hints[-1], shown
    assert len(lines) <= most, f"{len(lines)} lines:\n{shown}"
    for library in ("site-packages", "torch/", "helpers/", "File "):
        assert library not in shown, shown


@pytest.mark.parametrize("message, phrase", [
    ("Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu!",
     "model.to(device)"),  # no GPU here to raise it
    ("Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() instead.", ".detach()"),
    ("a leaf Variable that requires grad is being used in an in-place operation.", "torch.no_grad()"),
    ("element 0 of tensors does not require grad and does not have a grad_fn", "replaced by new tensors"),
    ("The size of tensor a (3) must match the size of tensor b (4) at non-singleton dimension 1", "broadcast"),
    ("operands could not be broadcast together with shapes (5,3) (4,) ", "broadcast"),  # NumPy (01)
    ("matmul: Input operand 1 has a mismatch in its core dimension 0, with gufunc signature (n?,k),(k,m?)->(n?,m?) "
     "(size 4 is different from 3)", "transpose"),
])
def test_the_course_hint_of_a_message_raised_where_no_kernel_test_reaches(message, phrase):
    from helpers.tracebacks import course_hint

    assert phrase in course_hint(RuntimeError(message))
    assert course_hint(RuntimeError("something the course has no hint for")) is None


def test_plain_traceback_module_still_shows_everything():
    """Outside IPython nothing is rewritten: traceback.format_exception shows the full chain."""
    error = _raised(FAILURES["check_true"])
    full = "".join(traceback.format_exception(type(error), error, error.__traceback__))
    assert "checks.py" in full
