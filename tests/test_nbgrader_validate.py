"""nbgrader's own validator (what a student's Validate button runs) on every assignment (issue 20, §4).

The source notebook, a right answer throughout, must pass `nbgrader validate`: nbgrader fails a cell that
writes to stderr, so a warning printed by torch under a right answer (02's forward-mode Jacobian on torch
2.14 printed a FutureWarning) fails it. The untouched release must fail every visible test: `nbgrader
validate --invert` lists the cells that pass, and the only ones allowed are the hidden-test placeholders
(a docstring and `pass`), which do nothing in a student's copy.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from autograder.course.layout import Course

ROOT = Path(__file__).resolve().parents[1]
COURSE = Course(ROOT)
ASSIGNMENTS = COURSE.assignments()
# Not yet reworked by issue 20 (their source notebooks may still write to stderr under the newest torch):
# strict, so that the day one passes, this test fails until it leaves the list.
NOT_YET: set[str] = set()
PLACEHOLDER = "Hidden tests: the autograder runs them"

pytestmark = pytest.mark.slow


def _validate(notebook: Path, tmp_path: Path, *options: str) -> str:
    """nbgrader validate on a copy of `notebook` (nbgrader writes nothing beside it); stdout and stderr."""
    copy = tmp_path / notebook.name
    shutil.copy(notebook, copy)
    result = subprocess.run([sys.executable, "-m", "nbgrader", "validate", *options, copy.name], cwd=tmp_path,
                            capture_output=True, text=True, timeout=300)
    return result.stdout + result.stderr


def passing_cells(output: str) -> list[str]:
    """The cells that `validate --invert` reports as passing: the text it quotes of each."""
    blocks = re.split(r"^=+$", output, flags=re.M)
    return [block for block in blocks if "The following cell passed:" in block]


def _case(assignment: str):
    marks = [pytest.mark.xfail(strict=True, reason="issue 20: not fixed yet")] if assignment in NOT_YET else []
    return pytest.param(assignment, id=assignment, marks=marks)


@pytest.mark.parametrize("assignment", [_case(a) for a in ASSIGNMENTS])
def test_nbgraders_validator_passes_the_source_notebook(assignment, tmp_path):
    output = _validate(COURSE.source_notebook(assignment), tmp_path)
    assert "Success! Your notebook passes all the tests." in output, output[-3000:]


@pytest.mark.parametrize("assignment", [_case(a) for a in ASSIGNMENTS])
def test_nbgraders_validator_fails_every_visible_test_of_the_release(assignment, tmp_path):
    output = _validate(COURSE.release_notebook(assignment), tmp_path, "--invert")
    visible = [block.strip() for block in passing_cells(output) if PLACEHOLDER not in block]
    assert visible == [], "an untouched release passes these test cells:\n" + "\n---\n".join(visible)


def test_a_cell_writing_to_stderr_fails_validation(tmp_path):
    """The measure can fail: a right answer whose test cell prints a warning to stderr is failed by nbgrader."""
    import nbformat
    from nbformat.v4 import new_code_cell, new_notebook

    def cell(source, **nbgrader):
        return new_code_cell(source, metadata={"nbgrader": {"schema_version": 3, "locked": True, **nbgrader}})

    notebook = new_notebook(cells=[
        cell("def double(x):\n    return 2 * x", grade_id="double", solution=True, grade=False, locked=False),
        cell("import warnings\nwarnings.warn('deprecated', FutureWarning)\nassert double(2) == 4",
             grade_id="test_double", solution=False, grade=True, points=1),
    ])
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    path = tmp_path / "edited" / "tiny.ipynb"
    path.parent.mkdir()
    nbformat.write(notebook, path)
    (tmp_path / "run").mkdir()
    assert "VALIDATION FAILED" in _validate(path, tmp_path / "run")
    notebook.cells[1].source = "assert double(2) == 4"  # the same right answer, silent: it passes
    nbformat.write(notebook, path)
    assert "Success!" in _validate(path, tmp_path / "run")
