"""HideHiddenTests: the feedback a student keeps shows no hidden test's code, only its verdict."""

from __future__ import annotations

import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_output
from nbgrader.preprocessors import ClearHiddenTests

from autograder.engine.hide_hidden_tests import HideHiddenTests

HIDDEN = ('"""Hidden: scale keeps the sign."""\n### BEGIN HIDDEN TESTS\nx_secret = np.arange(6.0)\n'
          "check_close(scale(x_secret, -0.5), -0.5 * x_secret)\n### END HIDDEN TESTS\n")


def test_the_hidden_region_goes_and_its_outputs_keep_only_the_message():
    cell = new_code_cell(HIDDEN, outputs=[
        new_output("stream", name="stdout", text="x_secret = [0. 1. 2. 3. 4. 5.]\n"),
        new_output("error", ename="AssertionError", evalue="scale(x, -0.5) is wrong: expected -0.5 * x",
                   traceback=["Traceback ...", "----> 3 check_close(scale(x_secret, -0.5), -0.5 * x_secret)"])],
        metadata={"nbgrader": {"grade": True, "grade_id": "test_scale_hidden", "points": 2, "solution": False}})
    cell, _ = HideHiddenTests().preprocess_cell(cell, {}, 0)
    assert "x_secret" not in cell.source and cell.source.startswith('"""Hidden: scale keeps the sign."""')
    (error,) = cell.outputs
    assert error.traceback == ["AssertionError: scale(x, -0.5) is wrong: expected -0.5 * x",
                               "(the hidden test's code is not shown)"]
    assert error.evalue == "scale(x, -0.5) is wrong: expected -0.5 * x"
    assert "x_secret" not in str(cell.outputs)


def test_a_long_message_is_cut_and_a_visible_test_keeps_its_outputs():
    long = new_code_cell(HIDDEN, outputs=[new_output("error", ename="ValueError", evalue="x" * 1000,
                                                     traceback=["tb"])])
    long, _ = HideHiddenTests().preprocess_cell(long, {}, 0)
    assert len(long.outputs[0].traceback[0]) == 300
    visible = new_code_cell("check_close(scale(1, 2), 2)", outputs=[new_output("stream", name="stdout", text="ok\n")])
    visible, _ = HideHiddenTests().preprocess_cell(visible, {}, 0)
    assert visible.outputs[0].text == "ok\n"


def test_a_region_in_a_cell_that_is_no_grade_cell_does_not_stop_the_feedback():
    """nbgrader's ClearHiddenTests refuses it (enforce_metadata); the feedback goes on."""
    def note():
        return new_markdown_cell("Notes:\n### BEGIN HIDDEN TESTS\nmy guess\n### END HIDDEN TESTS\n")

    with pytest.raises(RuntimeError, match="non-grade cell"):
        ClearHiddenTests(enforce_metadata=True).preprocess_cell(note(), {}, 0)
    cell, _ = HideHiddenTests().preprocess_cell(note(), {}, 0)
    assert "my guess" not in cell.source
