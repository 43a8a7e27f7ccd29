"""`python -m autograder check`: the gates pass on a sound assignment and each one can fail."""

from __future__ import annotations

import json
import shutil

import nbformat
import pytest

from autograder.__main__ import main
from autograder.check import MIN_MUTANTS, REPORT_KEYS, plan_assignment
from autograder.notebooks import grade_id
from autograder.release import release
from autograder.template import build_template

pytestmark = pytest.mark.slow


def test_a_sound_assignment_passes_every_gate(fixture_course, capsys):
    release(fixture_course)
    assert main(["check", "--root", str(fixture_course.root), "--jobs", "2"]) == 0
    out = capsys.readouterr().out
    header, rule, row = out.splitlines()[:3]
    assert header.split() == ["assignment", "tests", "points", "solution", "release", "mutants",
                              "seconds", "gates"]
    assert row.split()[:6] == ["00_fixture", "4", "6", "6", "0", "4/4"] and row.endswith("ok")
    assert "All gates pass." in out
    (report,) = json.loads((fixture_course.build_dir / "course-report.json").read_text())
    assert set(REPORT_KEYS) <= set(report)
    assert {k: report[k] for k in REPORT_KEYS if k != "seconds"} == {
        "assignment": "00_fixture", "max_score": 6, "solution_score": 6, "release_score": 0,
        "mutants_caught": 4, "mutants_total": 4}
    assert report["seconds"] > 0 and report["failures"] == []
    # A warning on stderr in a hidden test did not cost the solution its points (IgnorePattern).
    assert report["solution_score"] == report["max_score"]


def test_each_gate_fails_loudly_naming_assignment_gate_and_culprit(fixture_course, capsys):
    release(fixture_course)
    mutants = fixture_course.mutants_dir / "00_fixture"
    # A real mistake the test it names does not see: test_scale only uses a positive factor.
    (mutants / "claims_too_much.py").write_text(
        '"""scale drops the sign of the factor."""\n# replaces: scale\n# caught by: test_scale\n'
        "def scale(x, factor):\n    return x * abs(factor)\n")
    (mutants / "names_a_ghost.py").write_text(
        '"""mean_square forgets the square."""\n# replaces: mean_square\n'
        "# caught by: test_mean_sqaure\ndef mean_square(x):\n    return sum(x) / len(x)\n")
    # A release that gives away an answer: its tests score without any student work.
    path = fixture_course.release_notebook("00_fixture")
    nb = nbformat.read(path, as_version=4)
    next(c for c in nb.cells if grade_id(c) == "scale").source = (
        "def scale(x, factor):\n    return x * factor")
    nbformat.write(nb, path)

    assert main(["check", "--root", str(fixture_course.root), "--jobs", "2"]) == 1
    out = capsys.readouterr().out
    assert "FAIL" in out.splitlines()[2]
    failures = out.split("gate failure(s):")[1]
    assert ("00_fixture: gate 'mutants': mutant claims_too_much (scale drops the sign of the "
            "factor.) is not caught by test_scale (scored 1/1)") in failures
    assert "names_a_ghost.py: '# caught by: test_mean_sqaure' names no test cell" in failures
    assert "gate 'release': the untouched release notebook scored 3" in failures
    assert "test_scale 1/1" in failures and "test_scale_hidden 2/2" in failures
    assert "gate 'release sync': release/00_fixture/ differs from a fresh generation" in failures
    assert "gate 'no leaks': release/00_fixture/00_fixture.ipynb holds 1" in failures
    report = json.loads((fixture_course.build_dir / "course-report.json").read_text())
    assert report[0]["mutants_caught"] == 4 and report[0]["mutants_total"] == 6


def test_too_few_mutants_and_a_missing_release_are_gate_failures(fixture_course, tmp_path):
    for path in sorted((fixture_course.mutants_dir / "00_fixture").glob("*.py"))[:2]:
        path.unlink()
    template = build_template(fixture_course.source_dir, ["00_fixture"], tmp_path / "template")
    plan = plan_assignment(fixture_course, template, "00_fixture", tmp_path / "mutants", None)
    assert [job.label for job in plan.jobs][0] == "solution"
    assert len(plan.mutants) == 2
    assert any(f"2 mutant(s) in tests/mutants/00_fixture/, at least {MIN_MUTANTS} needed" in p
               for p in plan.problems)
    assert any("release/00_fixture/00_fixture.ipynb is missing" in p for p in plan.problems)


def test_a_solution_that_fails_its_own_tests_fails_the_solution_gate(fixture_course, capsys):
    path = fixture_course.source_notebook("00_fixture")
    nb = nbformat.read(path, as_version=4)
    cell = next(c for c in nb.cells if grade_id(c) == "mean_square")
    cell.source = cell.source.replace("** 2", "** 3")
    nbformat.write(nb, path)
    release(fixture_course)
    shutil.rmtree(fixture_course.mutants_dir)  # only the solution and release gates matter here
    assert main(["check", "--root", str(fixture_course.root), "--quiet"]) == 1
    out = capsys.readouterr().out
    assert ("gate 'solution': the source notebook scored 3/6; lost points on test_mean_square 0/1 "
            "(CheckFailed: mean_square([1, 3]) does not match") in out  # the check's own message
    assert "test_mean_square_hidden 0/2" in out
