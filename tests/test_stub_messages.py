"""An untouched exercise gets no hint about a mistake it has not made (issue 20, §5).

nbgrader's stub raises NotImplementedError, a subclass of RuntimeError: a test cell that catches RuntimeError
to explain a mode mix-up would explain it to a student who has written nothing yet. In the untouched release
of 02 those test cells fail with the stub's NotImplementedError itself.
"""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

from autograder.course.layout import Course

ROOT = Path(__file__).resolve().parents[1]
CELLS = ("test_jacobian_forward", "test_jacobian_reverse", "test_train_autograd_mlp", "test_to_numpy")

pytestmark = pytest.mark.slow


def test_untouched_stubs_fail_with_notimplementederror_not_a_hint(tmp_path):
    nb = nbformat.read(Course(ROOT).release_notebook("02_autograd"), as_version=4)
    NotebookClient(nb, timeout=120, allow_errors=True, resources={"metadata": {"path": str(tmp_path)}}).execute()
    errors = {}
    for cell in nb.cells:
        grade_id = cell.get("metadata", {}).get("nbgrader", {}).get("grade_id")
        if grade_id in CELLS:
            errors[grade_id] = [o.get("ename") for o in cell.get("outputs", []) if o.get("output_type") == "error"]
    assert errors == {name: ["NotImplementedError"] for name in CELLS}, errors
