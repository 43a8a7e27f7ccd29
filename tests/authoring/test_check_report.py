"""`check`'s report: a stale release is named stale, and `check NN` merges into
build/course-report.json instead of replacing it (issue 19)."""

from __future__ import annotations

import json
import shutil

import pytest

from autograder.__main__ import main
from autograder.authoring.student_release import release
from autograder.course.notebooks import grade_id, read_notebook, write_notebook

pytestmark = pytest.mark.slow  # one check of the fixture course (six graded runs)
A = "00_fixture"


def test_a_stale_release_is_reported_as_stale_and_check_nn_merges_the_report(fixture_course,
                                                                            capsys):
    course = fixture_course
    release(course)
    # A second assignment, checked earlier: its entry must survive `check 00_fixture`.
    (course.source_dir / "01_second").mkdir()
    shutil.copyfile(course.source_notebook(A), course.source_notebook("01_second"))
    report = course.build_dir / "course-report.json"
    report.parent.mkdir(parents=True, exist_ok=True)
    earlier = {"assignment": "01_second", "max_score": 6, "failures": [], "seconds": 1.0}
    report.write_text(json.dumps([{"assignment": A, "failures": ["old"]}, earlier,
                                  {"assignment": "99_gone", "failures": []}]))
    # The source moves on (a cell renamed) and release/ is not generated again.
    path = course.source_notebook(A)
    nb = read_notebook(path)
    next(c for c in nb.cells if grade_id(c) == "summary").metadata["nbgrader"]["grade_id"] = "sum"
    write_notebook(nb, path)

    assert main(["check", A, "--root", str(course.root), "--jobs", "2", "--quiet"]) == 1
    out = capsys.readouterr().out
    # Named as stale whether or not the stale release could be graded (nbgrader matches its cells where the
    # restore pairs them by their text; where it cannot, gate 'release' says it is stale too).
    assert f"gate 'release sync': release/{A}/ differs from a fresh generation" in out
    assert f"run `python -m autograder release {A}`" in out
    assert "could not be graded: the notebook's nbgrader metadata is corrupted" not in out
    entries = json.loads(report.read_text())
    assert [e["assignment"] for e in entries] == [A, "01_second"]
    assert entries[1] == earlier and entries[0]["failures"] != ["old"]
