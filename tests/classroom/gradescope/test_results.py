"""Gradescope's results.json from one graded record of the fixture notebook: what each test says, the
text above them, the submission laid out as `grade` reads it, and a grader's own fault never a grade
(the zip, run_autograder and the real course's records: tests/classroom/test_gradescope.py)."""

from __future__ import annotations

import json

import jsonschema
import pytest

from autograder.classroom.gradescope import results as gradescope
from autograder.classroom.gradescope.results import (
    STUDENT,
    SubmissionProblem,
    find_notebook,
    grade_gradescope,
    lay_out,
    problem_results,
    results_from,
    validate,
)
from autograder.course.notebooks import read_notebook


@pytest.fixture
def source_nb(fixture_course):
    return read_notebook(fixture_course.source_notebook("00_fixture"))


def record(**changes) -> dict:
    cells = {"test_scale": (1, 1), "test_scale_hidden": (2, 2), "test_mean_square": (1, 1),
             "test_mean_square_hidden": (2, 2)}
    base = {"student_id": STUDENT, "assignment": "00_fixture", "status": "graded", "score": 6.0, "max_score": 6.0,
            "reason": "", "warnings": [], "verification": {"scale": "passed", "mean_square": "passed"},
            "cells": {g: {"score": s, "max_score": m, "error": ""} for g, (s, m) in cells.items()}}
    return {**base, **changes}


def test_a_withdrawn_test_names_the_exercise_checked_outside_and_the_text_says_so(source_nb):
    cells = record()["cells"]
    cells["test_scale"] = {"score": 0.0, "max_score": 1, "error": ""}
    results = results_from(record(score=5.0, cells=cells, warnings=["graded 'Copy of 00_fixture.ipynb'"],
                                  verification={"scale": "scale: out differs (on inputs your notebook never saw)",
                                                "mean_square": "passed"}), source_nb, seconds=3.14159)
    scale = next(t for t in results["tests"] if t["name"].startswith("scale multiplies"))
    assert scale["score"] == 0.0 and scale["output"].startswith("Points withdrawn: checked outside your notebook, scale:")
    outside = [t for t in results["tests"] if t["name"].startswith("Checked outside your notebook")]
    assert [(t["name"], t["status"]) for t in outside] == [
        ("Checked outside your notebook: scale", "failed"), ("Checked outside your notebook: mean_square", "passed")]
    text = results["output"]
    assert text.startswith("**00_fixture: 5 of 6 points.**") and "1 test(s) lost points" in text
    assert "these exercises failed: scale" in text and "- graded 'Copy of 00_fixture.ipynb'" in text
    assert results["execution_time"] == 3.14 and results["stdout_visibility"] == "hidden"


def test_scores_that_do_not_add_up_or_a_field_gradescope_would_refuse_are_refused(source_nb):
    good = results_from(record(), source_nb)
    validate(good)
    with pytest.raises(ValueError, match="add up to 6, the score is 7"):
        validate({**good, "score": 7.0})
    with pytest.raises(jsonschema.ValidationError):
        validate({**good, "tests": [{**good["tests"][0], "visibility": "everyone"}]})


def test_a_problem_with_the_submission_scores_zero_on_every_test_with_the_reason(source_nb):
    results = problem_results("No notebook (.ipynb) in your submission.", source_nb, "00_fixture")
    assert results["score"] == 0 and all(t.get("score", 0) == 0 for t in results["tests"])
    assert results["output"].startswith("**00_fixture: 0 of 6 points.**\n\nYour notebook could not be graded: No")


def test_the_one_notebook_is_laid_out_for_grade_keeping_its_name(tmp_path):
    submission = tmp_path / "submission"
    (submission / "nested" / ".ipynb_checkpoints").mkdir(parents=True)
    (submission / "nested" / ".ipynb_checkpoints" / "a-checkpoint.ipynb").write_text("{}")
    (submission / "nested" / "Copy of 00_fixture.ipynb").write_text("{}")
    found = find_notebook(submission, "00_fixture")
    copy = lay_out(found, "00_fixture", tmp_path / "submitted")
    assert copy == tmp_path / "submitted" / STUDENT / "00_fixture" / "Copy of 00_fixture.ipynb"
    (submission / "other.ipynb").write_text("{}")
    assert find_notebook(submission, "00_fixture") == found  # the one named for the assignment
    (submission / "00_fixture (1).ipynb").write_text("{}")
    with pytest.raises(SubmissionProblem, match="holds 3 notebooks .*upload only 00_fixture.ipynb"):
        find_notebook(submission, "00_fixture")


def test_a_fault_of_the_grader_writes_zero_with_the_reason_and_raises(fixture_course, tmp_path, monkeypatch):
    root = tmp_path / "autograder"
    (root / "source").mkdir(parents=True)
    fixture_course.root.rename(root / "source" / "course")
    (root / "submission").mkdir()
    (root / "submission" / "00_fixture.ipynb").write_text("{}")
    monkeypatch.setattr(gradescope.kernel_user, "end", lambda name=None: None)
    monkeypatch.setattr(gradescope.privsep, "namespaces_missing", lambda: None)

    def broken(*args, **kwargs):
        raise RuntimeError("grade exited 1")

    monkeypatch.setattr(gradescope, "run_grade", broken)
    with pytest.raises(RuntimeError, match="grade exited 1"):
        grade_gradescope(root)
    written = json.loads((root / "results" / "results.json").read_text())
    assert written["score"] == 0 and "The autograder failed (RuntimeError: grade exited 1)" in written["output"]
