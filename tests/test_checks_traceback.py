"""A failed check shows the student's line and the message, not the frames of helpers/checks.py.

Every function of helpers.checks that is on the stack when a check fails sets `__tracebackhide__`;
`CheckFailed._render_traceback_` (IPython's hook) leaves those frames out.
"""

from __future__ import annotations

import re
import traceback

import nbformat
import numpy as np
import pytest
import torch

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


def test_outside_ipython_the_rendering_is_plain_python_without_checks_py():
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


@pytest.mark.slow
def test_a_failed_check_in_a_notebook_shows_the_students_line_and_the_message(tmp_path):
    """Executed by a real Jupyter kernel (nbclient): the error output Jupyter and nbgrader show."""
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError

    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_code_cell("import numpy as np\nfrom helpers.checks import check_shape"),
        nbformat.v4.new_code_cell("grad_w1 = np.zeros((100, 1000))\n"
                                  "check_shape(grad_w1, (1000, 100), 'grad_w1')  # the student's line"),
        nbformat.v4.new_code_cell("def relu(h):\n    return h.clamp(min=0)\nrelu([1.0])"),
    ]
    client = NotebookClient(nb, timeout=60, kernel_name="python3", allow_errors=True,
                            resources={"metadata": {"path": str(tmp_path)}})
    try:
        client.execute()
    except CellExecutionError as error:  # pragma: no cover - allow_errors keeps going
        pytest.fail(str(error))
    (error,) = [o for o in nb.cells[1].outputs if o.output_type == "error"]
    shown = _plain(error.traceback)
    assert error.ename == "CheckFailed"
    assert "grad_w1 has shape (100, 1000); expected (1000, 100)." in shown
    assert "did you forget a transpose?" in shown
    assert "the student's line" in shown  # the cell's failing line is there
    assert "checks.py" not in shown and "_fail" not in shown
    # Other errors keep their full traceback: a student's own bug is not hidden.
    (other,) = [o for o in nb.cells[2].outputs if o.output_type == "error"]
    assert other.ename == "AttributeError" and "h.clamp(min=0)" in _plain(other.traceback)


def test_plain_traceback_module_still_shows_everything():
    """Outside IPython nothing is rewritten: traceback.format_exception shows the full chain."""
    error = _raised(FAILURES["check_true"])
    full = "".join(traceback.format_exception(type(error), error, error.__traceback__))
    assert "checks.py" in full
