"""`python -m autograder check`: the gates pass on a sound assignment and each one can fail."""

from __future__ import annotations

import json
import shutil

import nbformat
import pytest

from autograder.__main__ import main
from autograder.authoring.check import MIN_MUTANTS, REPORT_KEYS, grading_problems, plan_assignment
from autograder.authoring.student_release import release
from autograder.course import exercises, grading_folder
from autograder.course.notebooks import grade_id, read_notebook
from autograder.engine import cgroups, sandbox
from autograder.engine.template import build_template


def mutants_dir(course):
    return grading_folder.folder(course.root, "00_fixture") / "mutants"


@pytest.mark.slow
def test_a_sound_assignment_passes_every_gate(fixture_course, capsys):
    release(fixture_course)
    assert main(["check", "--root", str(fixture_course.root), "--jobs", "2"]) == 0
    out = capsys.readouterr().out
    header, rule, row = out.splitlines()[:3]
    assert header.split() == ["assignment", "tests", "points", "solution", "release", "mutants",
                              "answers", "transcribed", "seconds", "gates"]
    assert row.split()[:7] == ["00_fixture", "4", "6", "6", "0", "4/4", "1/1"] and row.endswith("ok")
    assert "All gates pass." in out
    (report,) = json.loads((fixture_course.build_dir / "course-report.json").read_text())
    assert set(REPORT_KEYS) <= set(report)
    assert {k: report[k] for k in REPORT_KEYS if k != "seconds"} == {
        "assignment": "00_fixture", "max_score": 6, "solution_score": 6, "release_score": 0,
        "mutants_caught": 4, "mutants_total": 4}
    assert report["seconds"] > 0 and report["failures"] == []
    assert report["sandbox"] == sandbox.problems() + [p for p in [cgroups.problem()] if p]
    # The right answer of grading/00_fixture/variants/ was graded, trusted run included.
    assert report["samples"] == [{"file": "grading/00_fixture/variants/scale_multiply.py", "kind": "variants",
                                  "exercise": "scale", "run": "right:1", "ok": True, "why": ""}]
    assert [r["score"] for r in report["runs"] if r["label"] == "right:1"] == [6]


@pytest.mark.slow
def test_each_gate_fails_loudly_naming_assignment_gate_and_culprit(fixture_course, capsys):
    # An answer cell whose solution region stands at its top: the release's stub raises before the
    # function is defined, so an untouched notebook's test fails with a NameError, not a lesson.
    path = fixture_course.source_notebook("00_fixture")
    nb = nbformat.read(path, as_version=4)
    cell = next(c for c in nb.cells if grade_id(c) == "mean_square")
    cell.source = "### BEGIN SOLUTION\n_POWER = 2\n### END SOLUTION\n" + cell.source.replace("** 2", "** _POWER")
    nbformat.write(nb, path)
    release(fixture_course)
    mutants = mutants_dir(fixture_course)
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
    # A right answer whose hidden test warns: grading ignores stderr, nbgrader's validator does not.
    path = fixture_course.source_notebook("00_fixture")
    nb = nbformat.read(path, as_version=4)
    hidden = next(c for c in nb.cells if grade_id(c) == "test_mean_square_hidden")
    hidden.source = hidden.source.replace("### BEGIN HIDDEN TESTS\n", "### BEGIN HIDDEN TESTS\n"
                                          "import warnings\n\nwarnings.warn('deprecated', FutureWarning)\n")
    nbformat.write(nb, path)

    # A "right answer" that is wrong; a "wrong answer" that is right; one whose failure says other words.
    grading = grading_folder.folder(fixture_course.root, "00_fixture")
    (grading / "variants" / "scale_negated.py").write_text(
        '"""scale by the negated factor, filed as right."""\n# exercise: scale\n\n'
        "def scale(x, factor):\n    return x * -factor\n")
    (grading / "wrong").mkdir()
    (grading / "wrong" / "mean_square_is_right.py").write_text(
        '"""mean_square written another way, filed as wrong."""\n# exercise: mean_square\n'
        "# message: mean_square\n\ndef mean_square(x):\n    return float(np.mean(np.square(x)))\n")
    (grading / "wrong" / "scale_adds.py").write_text(
        '"""scale adds, and its file expects words the probe does not say."""\n# exercise: scale\n'
        "# message: words no probe says\n\ndef scale(x, factor):\n    return x + factor\n")

    assert main(["check", "--root", str(fixture_course.root), "--jobs", "2"]) == 1
    out = capsys.readouterr().out
    assert "FAIL" in out.splitlines()[2]
    failures = out.split("gate failure(s):")[1]
    assert ("gate 'right answers': grading/00_fixture/variants/scale_negated.py (scale, run right:2): "
            "the trusted run: ") in failures and "lost points on test_scale" in failures
    assert "variants/scale_multiply.py" not in failures
    assert ("gate 'wrong answers': grading/00_fixture/wrong/mean_square_is_right.py (mean_square, run "
            "wrong:1): the trusted run passed mean_square") in failures
    assert ("gate 'wrong answers': grading/00_fixture/wrong/scale_adds.py (scale, run wrong:1): the trusted "
            "run said ") in failures and "without 'words no probe says'" in failures
    assert ("00_fixture: gate 'mutants': mutant claims_too_much (scale drops the sign of the "
            "factor.) is not caught by test_scale (scored 1/1)") in failures
    assert "names_a_ghost.py: '# caught by: test_mean_sqaure' names no test cell" in failures
    assert "gate 'release': the untouched release notebook scored 3" in failures
    assert "test_scale 1/1" in failures and "test_scale_hidden 2/2" in failures
    assert ("gate 'release': on the untouched release notebook, test_mean_square (NameError: name "
            "'mean_square' is not defined): a student who has not started should read what to do") in failures
    assert "test_mean_square_hidden (" not in failures  # a hidden test may fail as it likes
    assert "gate 'release sync': release/00_fixture/ differs from a fresh generation" in failures
    assert ("gate 'validate': nbgrader's validator (a student's Validate button) and a plain `nbgrader "
            "autograde` fail the source notebook's test_mean_square_hidden") in failures
    assert "gate 'no leaks': release/00_fixture/00_fixture.ipynb holds 1" in failures
    report = json.loads((fixture_course.build_dir / "course-report.json").read_text())
    assert report[0]["mutants_caught"] == 4 and report[0]["mutants_total"] == 6
    assert report[0]["solution_score"] == 6  # what the hidden test wrote to stderr cost no point


@pytest.mark.slow
def test_too_few_mutants_and_a_missing_release_are_gate_failures(fixture_course, tmp_path):
    for path in sorted(mutants_dir(fixture_course).glob("*.py"))[:2]:
        path.unlink()
    template = build_template(fixture_course.source_dir, ["00_fixture"], tmp_path / "template")
    plan = plan_assignment(fixture_course, template, "00_fixture", tmp_path / "mutants", None)
    assert [job.label for job in plan.jobs][0] == "solution"
    assert len(plan.mutants) == 2
    assert any(f"2 mutant(s) in grading/00_fixture/mutants/, at least {MIN_MUTANTS} needed" in p
               for p in plan.problems)
    assert any("release/00_fixture/00_fixture.ipynb is missing" in p for p in plan.problems)


@pytest.mark.slow
def test_a_solution_that_fails_its_own_tests_fails_the_solution_gate(fixture_course, capsys, monkeypatch):
    path = fixture_course.source_notebook("00_fixture")
    nb = nbformat.read(path, as_version=4)
    cell = next(c for c in nb.cells if grade_id(c) == "mean_square")
    cell.source = cell.source.replace("** 2", "** 3")
    nbformat.write(nb, path)
    release(fixture_course)
    shutil.rmtree(mutants_dir(fixture_course))  # only the solution and release gates matter here
    monkeypatch.setattr(sandbox, "problems", lambda: ["grading kernels can reach the network (a test)"])
    assert main(["check", "--root", str(fixture_course.root), "--quiet"]) == 1
    out = capsys.readouterr().out
    assert ("gate 'solution': the source notebook scored 3/6; lost points on test_mean_square 0/1 "
            "(CheckFailed: mean_square([1, 3]) does not match") in out  # the check's own message
    assert "test_mean_square_hidden 0/2" in out
    # What the machine could not give of the sandbox is in the printout and the report.
    assert "kernels can reach the network (a test)" in out
    (report,) = json.loads((fixture_course.build_dir / "course-report.json").read_text())
    assert "grading kernels can reach the network (a test)" in report["sandbox"]


# -- the grading folder's gates, on a temporary copy of the fixture course (no grading run) -------------

def gates(course) -> list[str]:
    source_nb = read_notebook(course.source_notebook("00_fixture"))
    return grading_problems(course, "00_fixture", exercises.read(source_nb))


def test_the_fixture_grading_folder_passes_its_gates(fixture_course):
    assert gates(fixture_course) == []


def test_an_assignment_without_a_grading_folder_fails(fixture_course):
    shutil.rmtree(grading_folder.folder(fixture_course.root, "00_fixture"))
    (problem,) = gates(fixture_course)
    assert problem.startswith("gate 'grading folder': grading/00_fixture/ is missing")


def edit_probe(course, old: str, new: str) -> None:
    path = grading_folder.probe_path(course.root, "00_fixture")
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new))


def test_an_exercise_without_a_probe_fails(fixture_course):
    edit_probe(fixture_course, '"scale": Exercise(', '"unused": None, "scale": Exercise(')
    assert "does not load" in gates(fixture_course)[0]  # a probe that breaks the contract
    edit_probe(fixture_course, '"unused": None, ', "")
    path = fixture_course.source_notebook("00_fixture")
    nb = nbformat.read(path, as_version=4)
    cell = next(c for c in nb.cells if grade_id(c) == "scale")
    cell.source += "\n\n\ndef shift(x, offset):\n    return x + offset\n"
    nbformat.write(nb, path)
    assert gates(fixture_course) == ["gate 'probe': exercise shift has no probe in grading/00_fixture/probe.py"]


def test_a_probe_whose_exercise_is_gone_fails(fixture_course):
    edit_probe(fixture_course, '        "mean_square": Exercise(', '        "cube": Exercise(run_scale, expected=dict),\n'
                                                                   '        "mean_square": Exercise(')
    assert gates(fixture_course) == ["gate 'probe': grading/00_fixture/probe.py probes cube, which the notebook "
                                     "no longer defines"]


def test_a_missing_probe_fails(fixture_course):
    grading_folder.probe_path(fixture_course.root, "00_fixture").unlink()
    (problem,) = gates(fixture_course)
    assert "grading/00_fixture/probe.py is missing; exercises mean_square, scale have no probe" in problem


def test_a_mutant_that_names_no_exercise_fails(fixture_course):
    """A solution cell that only runs code (no def, class or name) holds no exercise to probe; a mutant
    naming no solution cell at all fails the gate 'mutants' (test_mutants.py)."""
    path = fixture_course.source_notebook("00_fixture")
    nb = nbformat.read(path, as_version=4)
    copy_cell(nb, "scale", "demo", "print(3)\n")
    nbformat.write(nb, path)
    (mutants_dir(fixture_course) / "wrong_demo.py").write_text(
        '"""The demo prints 4."""\n# replaces: demo\n# caught by: test_scale\nprint(4)\n')
    assert gates(fixture_course) == ["gate 'mutant exercise': grading/00_fixture/mutants/wrong_demo.py "
                                     "replaces demo, a solution cell that defines no exercise"]


def copy_cell(nb, like: str, new_id: str, source: str):
    """A solution cell like `like` with another grade_id and source, inserted before it."""
    import copy

    index = next(i for i, c in enumerate(nb.cells) if grade_id(c) == like)
    cell = copy.deepcopy(nb.cells[index])
    cell.metadata["nbgrader"]["grade_id"] = cell.id = new_id
    cell.source = source
    nb.cells.insert(index, cell)
    return cell


def test_a_variant_that_names_no_exercise_fails(fixture_course):
    folder = grading_folder.folder(fixture_course.root, "00_fixture") / "variants"
    (folder / "shift.py").write_text('"""shift by addition."""\n# exercise: shift\ndef shift(x, o):\n    return x + o\n')
    (folder / "headless.py").write_text('"""no header."""\ndef scale(x, f):\n    return x * f\n')
    problems = gates(fixture_course)
    assert any("variants/shift.py names exercise shift, which the probe does not know" in p for p in problems)
    assert any("headless.py: missing the line '# exercise: <exercise name>'" in p for p in problems)


def test_a_right_answers_may_lose_line_excuses_those_cells_alone(fixture_course, tmp_path):
    """A challenge's upper tier depends on how good a design is, not on its being right: a variant names the
    cells it may lose (`# may lose:`), and check excuses their loss and no other's."""
    from autograder.authoring.check import _judge_samples
    from autograder.engine.job import GradeResult

    path = tmp_path / "variants" / "scale_weaker.py"
    path.parent.mkdir()
    path.write_text('"""scale, weaker."""\n# exercise: scale\n# may lose: test_scale_hidden\n\n'
                    "def scale(x, factor):\n    return x * factor\n")
    sample = grading_folder.parse_sample(path)
    assert sample.may_lose == ("test_scale_hidden",)
    model = exercises.of_notebook(fixture_course.source_notebook("00_fixture"))
    cells = {gid: {"score": test.points, "max_score": test.points, "error": ""} for gid, test in model.tests.items()}
    result = GradeResult("right-1", "00_fixture", "right:1", "graded", 4.0, 6.0, cells=cells,
                         verification={"scale": "passed", "mean_square": "passed"})
    cells["test_scale_hidden"]["score"] = 0.0
    (record,), problems = _judge_samples("right:1", [sample], result, model)
    assert record["ok"] and problems == []
    cells["test_scale"]["score"] = 0.0  # a cell it did not name
    (record,), problems = _judge_samples("right:1", [sample], result, model)
    assert not record["ok"] and "lost points on test_scale" in record["why"] and "test_scale_hidden" not in record["why"]
