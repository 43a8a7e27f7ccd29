"""Plain `nbgrader autograde` with the course's config grades as `grade`'s nbgrader half does.

The repairs and the hardened executor are preprocessors declared in autograder/nbgrader_config.py,
so nbgrader's own command line (what an instructor using formgrader runs) restores a deleted test,
drops a duplicated one and keeps the points before a dead kernel, exactly like `grade`. The
fixture assignment has no probe: `grade`'s score there is nbgrader's alone.
"""

from __future__ import annotations

import copy
import subprocess
import sys
from pathlib import Path

import pytest
from nbgrader.api import Gradebook

from autograder.batch.grade import grade
from autograder.course.notebooks import grade_id, read_notebook, write_notebook
from tests.conftest import copy_fixture_course

pytestmark = pytest.mark.slow
CONFIG = Path(__file__).resolve().parents[1] / "autograder" / "nbgrader_config.py"
ASSIGNMENT = "00_fixture"


def handed_in(source):
    """The solution with test_scale deleted, test_scale_hidden duplicated above the original and
    the kernel killed in mean_square: 3 points (scale's) of 6, by both routes."""
    nb = copy.deepcopy(source)
    nb.cells = [c for c in nb.cells if grade_id(c) != "test_scale"]
    hidden = next(i for i, c in enumerate(nb.cells) if grade_id(c) == "test_scale_hidden")
    nb.cells.insert(hidden, copy.deepcopy(nb.cells[hidden]))
    next(c for c in nb.cells if grade_id(c) == "mean_square").source = "import os\nos._exit(1)"
    for cell in nb.cells:
        cell.pop("id", None)
    nb.nbformat_minor = 4
    return nb


def nbgrader_cli(course: Path, *args: str) -> None:
    """nbgrader's command line in `course`, whose nbgrader_config.py loads the course's config."""
    (course / "nbgrader_config.py").write_text(f"load_subconfig({str(CONFIG)!r})\n")
    command = [sys.executable, "-m", "nbgrader", *args, f"--CourseDirectory.root={course}",
               f"--CourseDirectory.db_url=sqlite:///{course / 'gradebook.db'}"]
    done = subprocess.run(command, cwd=course, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]


def test_plain_nbgrader_autograde_scores_as_grade_does(tmp_path):
    course = copy_fixture_course(tmp_path / "course")
    submission = handed_in(read_notebook(course.source_notebook(ASSIGNMENT)))

    write_notebook(submission, tmp_path / "submitted" / "alice" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb")
    rows = grade(course, tmp_path / "submitted", tmp_path / "out", [ASSIGNMENT], n_jobs=1)
    ours = float(rows[0]["score"])

    nbgrader_cli(course.root, "generate_assignment", ASSIGNMENT, "--force")
    write_notebook(submission, course.build_dir / "submitted" / "alice" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb")
    nbgrader_cli(course.root, "autograde", ASSIGNMENT, "--create")
    with Gradebook(f"sqlite:///{course.root / 'gradebook.db'}", "pytorch-course") as gb:
        submitted = gb.find_submission(ASSIGNMENT, "alice")
        theirs = submitted.score
        unscored = [g.name for g in submitted.notebooks[0].grades if g.score is None]
    assert (theirs, unscored) == (ours, [])
    assert ours == 3.0
