"""03's and 04's visible tests catch what their text demands, and their failures reach the student's eyes
(issue 38, part 3): each case is a student's mistake (a mutant of grading/<assignment>/mutants/) that a visible
test passed before, run here against that visible test cell in-process (probe_harness.namespace: the kernel's
setup, read-only and solution cells, the mutant in place of its cell), and where the probe let it through too,
against the probe on several draws.
"""

from __future__ import annotations

import numpy as np
import pytest
from probe_harness import COURSE, failures, namespace

from autograder.course import grading_folder
from autograder.course.mutants import parse_mutant
from autograder.course.notebooks import grade_id, read_notebook


def mutant(name: str, stem: str) -> tuple[str, str]:
    """(the cell it replaces, its code) of grading/<name>/mutants/<stem>.py."""
    found = parse_mutant(grading_folder.folder(COURSE.root, name) / "mutants" / f"{stem}.py")
    return found.replaces, found.code


def cell_source(name: str, gid: str) -> str:
    return next(c.source for c in read_notebook(COURSE.source_notebook(name)).cells if grade_id(c) == gid)


def visible_verdict(name: str, gid: str, stem: str | None = None) -> str | None:
    """None when the test cell `gid` passes over the solution (or the mutant `stem`); else what it raised."""
    names = namespace(name, dict([mutant(name, stem)]) if stem else None)
    try:
        exec(compile(cell_source(name, gid), f"<{gid}>", "exec"), names)
    except Exception as error:  # noqa: BLE001 - a failed check or the student's code raising: both fail the cell
        return f"{type(error).__name__}: {error}"
    return None


CAUGHT_BY_THE_VISIBLE_TEST = {  # mutant: (assignment, visible test, words of its failure)
    # before: passed (the visible tests normalized 2-D inputs only)
    "layernorm_grad_gamma_sums_dimension_0_only": ("03_custom_functions", "test_LayerNorm", "grad_gamma"),
    # before: passed (only the default eps, 1e-5, was used)
    "layernorm_ignores_eps": ("03_custom_functions", "test_LayerNorm", "eps"),
    # before: passed (one added leading dimension at most)
    "value_unbroadcast_if_not_while": ("03_custom_functions", "test_Value", "unbroadcast"),
    # before: passed (the smaller operand always on the right)
    "value_broadcasts_the_right_operand_only": ("03_custom_functions", "test_Value", "(5,) + (4, 5)"),
}


@pytest.mark.parametrize("stem", CAUGHT_BY_THE_VISIBLE_TEST)
def test_the_visible_test_catches_what_its_text_demands(stem):
    name, gid, words = CAUGHT_BY_THE_VISIBLE_TEST[stem]
    assert visible_verdict(name, gid) is None, "the solution must pass"
    said = visible_verdict(name, gid, stem)
    assert said is not None, f"{stem} passes {gid}"
    assert words in said, said


def test_03_layernorm_normalizes_a_single_row():
    """x of shape (D,): no leading dimension (before: the solution's backward summed grad_gamma over every
    dimension, a 0-d tensor, and autograd refused it: 'returned an invalid gradient at index 1 - got []')."""
    import torch

    names = namespace("03_custom_functions")
    x, gamma, beta = (torch.randn(6, dtype=torch.float64, requires_grad=True) for _ in range(3))
    torch.autograd.gradcheck(lambda *t: names["LayerNorm"].apply(*t, 1e-3), (x, gamma, beta))
    assert visible_verdict("03_custom_functions", "test_LayerNorm", "layernorm_sums_every_dimension_of_one_row")


@pytest.mark.parametrize("seed", range(6))
def test_03_the_probe_tells_an_ignored_eps_on_every_draw(seed, tmp_path):
    """Before: eps was drawn from {1e-5, 1e-3}, and a forward that always adds 1e-5 passed whenever 1e-5 came
    up (seeds 1, 2 and 5 of these)."""
    names = namespace("03_custom_functions", dict([mutant("03_custom_functions", "layernorm_ignores_eps")]))
    assert "LayerNorm" in failures("03_custom_functions", names, seed, tmp_path, only={"LayerNorm"})


@pytest.mark.parametrize("seed", range(3))
def test_03_the_probe_broadcasts_the_smaller_operand_on_either_side(seed, tmp_path):
    """Before: every engine case had the smaller operand on the right, and this mutant passed the probe."""
    names = namespace("03_custom_functions", dict([mutant("03_custom_functions",
                                                          "value_broadcasts_the_right_operand_only")]))
    assert "Value" in failures("03_custom_functions", names, seed, tmp_path, only={"Value"})


def test_03_eps_is_never_the_default_in_the_probe():
    from probe_harness import assignment

    draws = [float(assignment("03_custom_functions").probe.make_inputs(np.random.default_rng(s))["LayerNorm.eps"])
             for s in range(20)]
    assert min(draws) > 1e-4, draws


def _plain(lines) -> str:
    """Traceback lines as text, without the ANSI colour codes IPython adds."""
    import re

    return re.sub(r"\x1b\[[0-9;]*m", "", "\n".join(lines))


@pytest.mark.slow
def test_04_a_wrong_output_size_shows_the_tests_hint_not_a_reshape_traceback(tmp_path):
    """conv2d_forward with the padding left out of the output size raises in its own reshape. Before: a 26-line
    traceback through the test's own watch (ConvolutionWatch.__torch_function__) ending in "RuntimeError: shape
    '[2, 4, 4, 5]' is invalid for input of size 336"; the test's hint about padding never reached the student.
    Now, in a real kernel: the student's line, what it raised, and the hint, in a few lines."""
    import nbformat
    from nbclient import NotebookClient

    name = "04_nn_modules"
    _, code = mutant(name, "conv2d_forward_output_size_without_padding")
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(text) for text in
                (cell_source(name, "setup"), cell_source(name, "conv_test_tools"), code,
                 cell_source(name, "test_conv2d_forward"))]
    NotebookClient(nb, timeout=120, kernel_name="python3", allow_errors=True,
                   resources={"metadata": {"path": str(tmp_path)}}).execute()
    errors = [o for c in nb.cells for o in c.get("outputs", []) if o.output_type == "error"]
    assert len(errors) == 1 and nb.cells[-1].outputs[-1] is errors[0], [c.get("outputs") for c in nb.cells]
    shown = _plain(errors[0].traceback)
    assert errors[0].ename == "CheckFailed", shown
    assert "return out.reshape(n, c_out, h_out, w_out)" in shown, shown  # the student's line
    assert "Hint:" in shown and "padding" in shown.split("Hint:")[-1], shown
    assert "__torch_function__" not in shown and "ConvolutionWatch" not in shown, shown
    assert len(shown.splitlines()) <= 16, f"{len(shown.splitlines())} lines:\n{shown}"


WATCHED_WITHOUT_THE_SCAN = {  # wrong answer: words the probe says, the scan aside (check's run stops at the scan)
    "digits_cnn_hides_its_table_from_the_watch": "holds",
    "digits_cnn_reads_a_global_table_with_function_modes_off": "reads",
}


@pytest.mark.parametrize("stem", WATCHED_WITHOUT_THE_SCAN)
def test_04_digits_watches_hold_behind_the_scan(stem, tmp_path):
    """The scan now refuses the names these answers use to switch PyTorch's modes off (check's run says so first);
    the probe's own watch of what DigitsCNN reads and holds still catches them, in-process, without the scan."""
    sample = grading_folder.parse_sample(grading_folder.folder(COURSE.root, "04_nn_modules") / "wrong" / f"{stem}.py")
    failed = failures("04_nn_modules", namespace("04_nn_modules", None, sample.code), 0, tmp_path, only={"DigitsCNN"})
    assert WATCHED_WITHOUT_THE_SCAN[stem] in failed.get("DigitsCNN", ""), failed
