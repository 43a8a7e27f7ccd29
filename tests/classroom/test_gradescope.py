"""Gradescope: the autograder.zip, run_autograder on a folder laid out as /autograder, results.json."""

from __future__ import annotations

import inspect
import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import jsonschema
import nbformat
import pytest

from autograder.classroom.gradescope import SCRIPTS, build_zip, unpack
from autograder.classroom.gradescope.results import (
    SubmissionProblem,
    find_notebook,
    problem_results,
    results_from,
    validate,
)
from autograder.course import exercises
from autograder.course.grading_folder import probe_for
from autograder.course.layout import Course
from autograder.course.notebooks import read_notebook
from autograder.course.settings import REPO_ROOT
from autograder.engine import sandbox

ASSIGNMENT = "03_custom_functions"  # small, with a probe: the trusted run takes part
COURSE = Course(REPO_ROOT)
SOURCE_NB = read_notebook(COURSE.source_notebook(ASSIGNMENT))
FULL_MARKS = exercises.read(SOURCE_NB).max_score  # from the metadata: exercises come and go
ALL_PASSED = dict.fromkeys(probe_for(ASSIGNMENT, REPO_ROOT).exercises, "passed")


def _record(**changes) -> dict:
    """A grades.json record of a full-marks submission of ASSIGNMENT, changed as asked."""
    points = exercises.read(SOURCE_NB).test_points()
    record = {"student_id": "gradescope", "assignment": ASSIGNMENT, "status": "graded",
              "score": sum(points.values()), "max_score": sum(points.values()), "reason": "",
              "warnings": [], "cells": {g: {"score": p, "max_score": p, "error": ""}
                                        for g, p in points.items()},
              "verification": dict(ALL_PASSED)}
    record.update(changes)
    return record


# -- results.json from a record ----------------------------------------------------------------

def test_every_test_cell_is_one_entry_named_by_its_docstring_hidden_ones_after_published():
    results = results_from(_record(), SOURCE_NB)
    scored = [t for t in results["tests"] if "max_score" in t]
    assert len(scored) == len(exercises.read(SOURCE_NB).tests)
    by_name = {t["name"]: t for t in scored}
    hidden = [t for t in scored if t["visibility"] == "after_published"]
    assert hidden and all(t["name"].startswith("Hidden:") for t in hidden)
    assert {t["visibility"] for t in scored} == {"visible", "after_published"}
    assert any(name.startswith("Sigmoid computes sigmoid(x)") for name in by_name)
    assert results["score"] == sum(t["score"] for t in scored) == FULL_MARKS
    verdicts = [t for t in results["tests"] if t["name"].startswith("Checked outside your notebook")]
    assert [t["status"] for t in verdicts] == ["passed"] * len(ALL_PASSED)
    assert results["stdout_visibility"] == "hidden"


def test_withdrawn_points_and_errors_say_why():
    record = _record(verification={**ALL_PASSED, "Sigmoid": "Sigmoid's backward is off by 0.25 on unseen inputs"})
    for cell in ("test_Sigmoid", "test_relu"):
        record["score"] -= record["cells"][cell]["max_score"]  # the cells' own points: they change
    record["cells"]["test_Sigmoid"]["score"] = 0.0
    record["cells"]["test_relu"].update(score=0.0, error="CheckFailed: relu(x) has 3 nodes")
    results = results_from(record, SOURCE_NB)
    outputs = {t["name"].split(" ")[0]: t for t in results["tests"] if "max_score" in t}
    assert "off by 0.25" in outputs["Sigmoid"]["output"]
    assert outputs["Sigmoid"]["output"].startswith("Points withdrawn")
    assert outputs["relu(x)"]["output"] == "CheckFailed: relu(x) has 3 nodes"
    failed = [t for t in results["tests"] if t.get("status") == "failed"]
    assert [t["name"] for t in failed] == ["Checked outside your notebook: Sigmoid"]
    assert results["score"] == record["score"] < FULL_MARKS and "Sigmoid" in results["output"]


def test_a_submission_that_cannot_be_graded_scores_zero_with_the_reason():
    results = problem_results("No notebook (.ipynb) in your submission.", SOURCE_NB, ASSIGNMENT)
    assert results["score"] == 0
    assert all(t["score"] == 0 for t in results["tests"])
    assert "No notebook" in results["output"]


def test_a_record_grade_could_not_score_gives_zero_and_says_why():
    record = _record(status="error", score=0.0, reason="Copy of x.ipynb is not a readable notebook "
                                                        "(NotJSONError: not JSON)", verification={})
    results = results_from(record, SOURCE_NB)
    assert results["score"] == 0 and all(t["score"] == 0 for t in results["tests"])
    assert all("not a readable notebook" in t["output"] for t in results["tests"])
    assert "could not be graded" in results["output"]


def test_validate_rejects_what_gradescope_would_not_read():
    good = results_from(_record(), SOURCE_NB)
    validate(good)
    bad_visibility = json.loads(json.dumps(good))
    bad_visibility["tests"][0]["visibility"] = "students"
    with pytest.raises(jsonschema.ValidationError, match="students"):
        validate(bad_visibility)
    bad_sum = json.loads(json.dumps(good))
    bad_sum["score"] = 99
    with pytest.raises(ValueError, match="add up"):
        validate(bad_sum)


def test_test_cells_fall_back_to_the_grade_id_without_a_docstring():
    nb = read_notebook(COURSE.source_notebook(ASSIGNMENT))
    cell = next(c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") == "test_ReLU")
    cell.source = "assert True\n"
    names = [test["name"] for test in problem_results("not graded", nb, ASSIGNMENT)["tests"]]
    assert "test_ReLU" in names and len(names) == len(exercises.read(nb).tests)


# -- which notebook -----------------------------------------------------------------------------

def test_find_notebook_takes_any_single_name_and_refuses_to_guess(tmp_path):
    sub = tmp_path / "submission"
    (sub / ".ipynb_checkpoints").mkdir(parents=True)
    (sub / ".ipynb_checkpoints" / "x-checkpoint.ipynb").write_text("{}")
    with pytest.raises(SubmissionProblem, match="No notebook"):
        find_notebook(sub, ASSIGNMENT)
    (sub / "Copy of 03_custom_functions.ipynb").write_text("{}")
    assert find_notebook(sub, ASSIGNMENT).name == "Copy of 03_custom_functions.ipynb"
    (sub / "scratch.ipynb").write_text("{}")
    assert find_notebook(sub, ASSIGNMENT).name == "Copy of 03_custom_functions.ipynb"
    (sub / "03_custom_functions.ipynb").write_text("{}")
    with pytest.raises(SubmissionProblem, match="3 notebooks"):
        find_notebook(sub, ASSIGNMENT)


# -- the zip and its scripts ---------------------------------------------------------------------

@pytest.fixture(scope="module")
def autograder_zip(tmp_path_factory) -> Path:
    return build_zip(COURSE, ASSIGNMENT, tmp_path_factory.mktemp("gradescope"))


def test_the_zip_holds_the_scripts_at_its_root_the_wheel_and_the_source(autograder_zip, tmp_path):
    with zipfile.ZipFile(autograder_zip) as archive:
        names = archive.namelist()
        modes = {i.filename: (i.external_attr >> 16) & 0o777 for i in archive.infolist()}
    assert set(SCRIPTS) <= set(names)
    assert all(modes[s] & 0o111 for s in SCRIPTS)
    assert f"course/source/{ASSIGNMENT}/{ASSIGNMENT}.ipynb" in names
    assert f"course/grading/{ASSIGNMENT}/probe.py" in names  # the trusted run's probe
    wheels = [n for n in names if n.startswith("dist/pytorch_course-") and n.endswith(".whl")]
    assert len(wheels) == 1
    inside = zipfile.ZipFile(unpack(autograder_zip, tmp_path) / wheels[0]).namelist()
    # The trusted run needs the references and the probes; nbgrader its configuration.
    for needed in ("helpers/reference/custom_functions.py", "autograder/probes/__init__.py",
                   "autograder/nbgrader_config.py", "autograder/classroom/gradescope/results.py"):
        assert needed in inside
    assert not [n for n in names if n.startswith("course/source/") and ASSIGNMENT not in n]


def test_setup_sh_parses_and_installs_the_zips_wheel_with_cpu_torch(autograder_zip, tmp_path):
    source = unpack(autograder_zip, tmp_path)
    for script in SCRIPTS:
        subprocess.run(["bash", "-n", str(source / script)], check=True)
    text = (source / "setup.sh").read_text()
    assert "dist/pytorch_course-*.whl" in text and "[grading]" in text
    assert list(source.glob("dist/pytorch_course-*.whl"))
    assert "download.pytorch.org/whl/cpu" in text and "torch" in text
    assert "python3 -m venv" in text


def _run_autograder(autograder_zip: Path, tmp_path: Path, notebook: Path, name: str) -> dict:
    """Lay out tmp_path/autograder as Gradescope does, submit `notebook` as `name`, run it."""
    root = tmp_path / "autograder"
    unpack(autograder_zip, root / "source")
    assert list((root / "source" / "course" / "grading" / ASSIGNMENT).glob("mutants*"))
    (root / "submission").mkdir()
    shutil.copyfile(notebook, root / "submission" / name)
    env = dict(os.environ, AUTOGRADER_GRADESCOPE_ROOT=str(root),
               AUTOGRADER_GRADESCOPE_PYTHON=sys.executable,  # setup.sh's venv, skipped here
               PYTHONPATH=os.pathsep.join([str(REPO_ROOT), os.environ.get("PYTHONPATH", "")]))
    done = subprocess.run([str(root / "source" / "run_autograder")], env=env, cwd=tmp_path,
                          capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    results = json.loads((root / "results" / "results.json").read_text())
    validate(results)
    return results


def kernel_looks(private: list[str], visible: str) -> None:
    """Run in the grading kernel, after the answers: break `sigmoid` when it could read any of
    `private` or could not read `visible`. The kernel can leave no file the test could read; the
    trusted run, which runs this cell too, turns what it saw into points withdrawn."""
    import os

    def seen(path: str) -> bool:
        try:
            if os.path.isdir(path):
                return bool(os.listdir(path))
            with open(path, "rb") as f:
                return bool(f.read())
        except OSError:
            return False

    if any(seen(path) for path in private) or not seen(visible):
        globals()["sigmoid"] = lambda x: x * 0


def looking_notebook(notebook: Path, dest: Path, private: list[str], visible: str) -> Path:
    """`notebook` with a cell of the student's own that calls kernel_looks."""
    nb = read_notebook(notebook)
    call = f"kernel_looks({private!r}, {visible!r})"
    nb.cells.append(nbformat.v4.new_code_cell(inspect.getsource(kernel_looks) + "\n\n" + call))
    nbformat.write(nb, dest)
    return dest


SANDBOXED = sandbox.sandboxed()


@pytest.mark.slow
@pytest.mark.skipif(not SANDBOXED, reason="; ".join(sandbox.problems()))
def test_run_autograder_gives_the_solution_full_marks_and_hides_the_grading_folder(autograder_zip, tmp_path):
    # The zip carries course/grading/<assignment>/ (probe, mutants, variants) and the source
    # notebook: the student's kernel, started by run_autograder, must find them empty.
    course = tmp_path / "autograder" / "source" / "course"
    private = [str(course / "grading"), str(course / "grading" / ASSIGNMENT / "probe.py"),
               str(course / "source" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb")]
    submission = looking_notebook(COURSE.source_notebook(ASSIGNMENT), tmp_path / "solution.ipynb",
                                  private, "/etc/passwd")
    results = _run_autograder(autograder_zip, tmp_path, submission, f"Copy of {ASSIGNMENT}.ipynb")
    assert results["score"] == FULL_MARKS, results["output"]
    verdicts = [t for t in results["tests"] if "status" in t]
    assert len(verdicts) == len(ALL_PASSED) and all(t["status"] == "passed" for t in verdicts)
    assert "renamed notebook" in results["output"]
    # The control: a kernel that can read the probe loses the points (the channel works).
    (tmp_path / "control").mkdir()
    spying = looking_notebook(COURSE.source_notebook(ASSIGNMENT), tmp_path / "spying.ipynb",
                              ["/etc/passwd"], "/etc/passwd")
    assert _run_autograder(autograder_zip, tmp_path / "control", spying,
                           f"{ASSIGNMENT}.ipynb")["score"] < FULL_MARKS


PLANT_RESULTS = """import json, os
results = {root!r} + "/results"
try:
    with open(results + "/results.json", "w") as f:
        json.dump({{"score": 100, "output": "planted", "tests": []}}, f)
    os.makedirs(results + "/results.json.partial", exist_ok=True)
except OSError:
    pass
"""


def test_write_results_replaces_a_planted_file_and_a_folder_in_its_way(tmp_path):
    from autograder.classroom.gradescope.results import write_results

    target = tmp_path / "results" / "results.json"
    target.parent.mkdir()
    target.write_text('{"score": 100}')
    (tmp_path / "results" / "results.json.partial").mkdir()
    write_results({"score": 0, "output": "ours", "tests": []}, target)
    assert json.loads(target.read_text())["output"] == "ours"
    target.unlink()
    target.mkdir()  # a folder where the file goes
    write_results({"score": 0, "output": "ours again", "tests": []}, target)
    assert json.loads(target.read_text())["output"] == "ours again"


def test_a_grader_fault_still_writes_a_valid_results_json_that_says_why(tmp_path):
    from autograder.classroom.gradescope.results import grade_gradescope

    (tmp_path / "source" / "course" / "source").mkdir(parents=True)  # no assignment in the course
    with pytest.raises(RuntimeError):
        grade_gradescope(tmp_path)
    results = json.loads((tmp_path / "results" / "results.json").read_text())
    validate(results)
    assert results["score"] == 0 and "autograder failed" in results["output"]


@pytest.mark.slow
def test_run_autograder_gives_the_release_zero_whatever_a_kernel_planted(autograder_zip, tmp_path):
    """The untouched release, plus a cell that writes results.json (100 points) and makes
    results.json.partial a folder: the results Gradescope reads are the grader's, the release's 0."""
    nb = read_notebook(COURSE.release_notebook(ASSIGNMENT))
    nb.cells.insert(1, nbformat.v4.new_code_cell(PLANT_RESULTS.format(root=str(tmp_path / "autograder"))))
    submission = tmp_path / "planting.ipynb"
    nbformat.write(nb, submission)
    results = _run_autograder(autograder_zip, tmp_path, submission, f"{ASSIGNMENT}.ipynb")
    assert results["score"] == 0 and results["output"] != "planted"
    scored = [t for t in results["tests"] if "max_score" in t]
    assert len(scored) == len(exercises.read(SOURCE_NB).tests)
    assert all(t["score"] == 0 and t["output"] for t in scored)
    assert any("NotImplementedError" in t["output"] for t in scored)


def test_without_namespaces_and_without_root_results_json_refuses_and_says_why(tmp_path, monkeypatch):
    """No namespaces, and grading not root: no kernel may run as a user of its own, so none runs;
    results.json is a refusal that says why, and nothing is graded (issue 37, finding 7)."""
    from autograder.classroom.gradescope import results as gradescope_results
    from autograder.engine import privsep

    shutil.copytree(COURSE.source_dir / ASSIGNMENT, tmp_path / "source" / "course" / "source" / ASSIGNMENT)
    (tmp_path / "submission").mkdir()
    shutil.copyfile(COURSE.source_notebook(ASSIGNMENT), tmp_path / "submission" / f"{ASSIGNMENT}.ipynb")
    monkeypatch.setenv(privsep.NO_NAMESPACES_SETTING, "1")
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    monkeypatch.setattr(gradescope_results, "run_grade", lambda *a, **k: pytest.fail("grade ran"))
    results = gradescope_results.grade_gradescope(tmp_path)
    assert json.loads((tmp_path / "results" / "results.json").read_text()) == results
    validate(results)
    assert results["score"] == 0 and all(t.get("score", 0) == 0 for t in results["tests"])
    assert "refused" in results["output"] and "does not run as root" in results["output"]
