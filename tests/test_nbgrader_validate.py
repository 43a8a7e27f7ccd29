"""nbgrader's own validator (what a student's Validate button runs) and the course's rule for it (issue 20, §4).

nbgrader fails a test cell that writes to stderr, so a warning printed by torch under a right answer
(02's forward-mode Jacobian on torch 2.14 printed a FutureWarning) fails a student's Validate and a
plain `nbgrader autograde`. Grading drops stderr before scoring (a student's warning must not cost
points), so `check` holds the source notebooks to nbgrader's rule on their own grading run: its gate
'validate' reads what `autograder/engine/quiet_stderr.py` noted before the drop (tests/test_pipeline.py
asserts it for every assignment; tests/test_autograder_check.py shows the gate fail). This file shows
that the rule is nbgrader's: `nbgrader validate` fails the cell, and QuietStderr names the same cell on
the same notebook. (The untouched release failing every visible test, `validate --invert`, is the
release gate: it scores zero on the same tests.)
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
from nbclient import NotebookClient
from nbformat.v4 import new_code_cell, new_notebook

from autograder.engine.quiet_stderr import QuietStderr


def _validate(notebook: Path, tmp_path: Path, *options: str) -> str:
    """nbgrader validate on a copy of `notebook` (nbgrader writes nothing beside it); stdout and stderr."""
    copy = tmp_path / notebook.name
    shutil.copy(notebook, copy)
    result = subprocess.run([sys.executable, "-m", "nbgrader", "validate", *options, copy.name], cwd=tmp_path,
                            capture_output=True, text=True, timeout=300)
    return result.stdout + result.stderr


def _noted(notebook, tmp_path: Path) -> list[str]:
    """The cells QuietStderr (grading's step after the run) notes on `notebook` executed by nbclient."""
    executed = nbformat.from_dict(json.loads(json.dumps(notebook)))
    NotebookClient(executed, timeout=60, allow_errors=True).execute()
    record = tmp_path / "stderr.json"
    step = QuietStderr(enabled=True, pattern=r"[\s\S]", record=str(record))
    step.preprocess(executed, {})
    assert not any(o.get("name") == "stderr" for c in executed.cells for o in c.get("outputs", []))
    return json.loads(record.read_text())


def test_quiet_stderr_notes_the_cells_nbgraders_validator_fails_for_their_stderr(tmp_path):
    """A right answer whose test cell prints a warning to stderr: nbgrader validate fails it, QuietStderr names it."""
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
    assert _noted(notebook, tmp_path) == ["test_double"]  # the same cell, by the same rule
    notebook.cells[1].source = "assert double(2) == 4"  # the same right answer, silent: it passes
    nbformat.write(notebook, path)
    assert "Success!" in _validate(path, tmp_path / "run")
    assert _noted(notebook, tmp_path) == []
