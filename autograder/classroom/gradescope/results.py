"""`python -m autograder.classroom.gradescope.results --root /autograder`: grade one Gradescope submission.

run_autograder calls this. It finds the one notebook in ROOT/submission/ (any name: `Copy of
03_custom_functions.ipynb` too), lays it out as `grade` expects (SUBMITTED/<student>/<assignment>/),
runs `python -m autograder grade` on it with the course in ROOT/source/course (nbgrader, the
trusted run, the sandbox: everything a local batch does), and turns its grades.json record into
ROOT/results/results.json as Gradescope reads it:

  score, execution_time, output (the feedback, Markdown), stdout_visibility "hidden" (the log is
  the instructor's), tests: one per nbgrader test cell, named by the first line of its docstring,
  with its score, max_score, the error it raised or why its points were withdrawn; hidden tests
  `after_published`; then one entry per exercise "checked outside your notebook" (no points of
  its own: a failure there already withdrew the points of its test cells).

A student's mistake (no notebook, several, a malformed one) gets a results.json with 0 and the
reason; a fault of the grader itself raises, and Gradescope shows the instructor its stdout.

Where the container forbids namespaces, kernels run as the user of kernel_user.py
(autograder/engine/privsep.py), and what grade creates is closed to everyone else (umask 077);
where even that cannot be had, results.json is a refusal (0, the reason) and nothing is graded.
Every process of that user is killed, and waited for, before results.json is written.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import jsonschema

from autograder.classroom.gradescope import kernel_user
from autograder.course import exercises
from autograder.course.layout import Course
from autograder.course.notebooks import read_notebook
from autograder.course.submitted import assignment_of
from autograder.engine import privsep

ROOT_ENV = "AUTOGRADER_GRADESCOPE_ROOT"
DEFAULT_ROOT = Path("/autograder")
STUDENT = "gradescope"  # the student folder of the one-submission batch
VISIBILITY = ("hidden", "after_due_date", "after_published", "visible")
HIDDEN_TEST_VISIBILITY = "after_published"
_IGNORED = re.compile(r"(^|/)(\.|__MACOSX)")  # .ipynb_checkpoints, macOS droppings

# Gradescope's results.json, as much of it as this module writes
# (https://gradescope-autograders.readthedocs.io/en/latest/specs/#output-format).
_TEST = {
    "type": "object",
    "required": ["name", "output", "visibility"],
    "properties": {
        "name": {"type": "string", "minLength": 1},
        "score": {"type": "number", "minimum": 0},
        "max_score": {"type": "number", "minimum": 0},
        "status": {"enum": ["passed", "failed"]},
        "output": {"type": "string"},
        "output_format": {"enum": ["text", "html", "simple_format", "md", "ansi"]},
        "visibility": {"enum": list(VISIBILITY)},
    },
}
SCHEMA = {
    "type": "object",
    "required": ["score", "output", "tests"],
    "properties": {
        "score": {"type": "number", "minimum": 0},
        "execution_time": {"type": "number", "minimum": 0},
        "output": {"type": "string"},
        "output_format": {"enum": ["text", "html", "simple_format", "md", "ansi"]},
        "visibility": {"enum": list(VISIBILITY)},
        "stdout_visibility": {"enum": list(VISIBILITY)},
        "extra_data": {"type": "object"},
        "tests": {"type": "array", "items": _TEST},
    },
}


class SubmissionProblem(Exception):
    """What the student handed in cannot be graded; the message is for the student."""


def validate(results: dict) -> None:
    """Raise jsonschema.ValidationError (naming the field) unless `results` is Gradescope's format,
    and ValueError when the tests' scores do not add up to the score."""
    jsonschema.validate(results, SCHEMA)
    scored = [t["score"] for t in results["tests"] if "score" in t]
    if scored and abs(sum(scored) - results["score"]) > 1e-6:
        raise ValueError(f"results.json: the tests' scores add up to {sum(scored):g}, "
                         f"the score is {results['score']:g}")


def find_notebook(submission: Path, assignment: str) -> Path:
    """The notebook to grade in Gradescope's submission folder (searched recursively)."""
    found = sorted(p for p in Path(submission).rglob("*.ipynb")
                   if p.is_file() and not _IGNORED.search(p.relative_to(submission).as_posix()))
    if len(found) == 1:
        return found[0]
    if not found:
        raise SubmissionProblem(f"No notebook (.ipynb) in your submission. Upload your "
                                f"{assignment}.ipynb (File > Download > .ipynb in Colab).")
    named = [p for p in found if assignment_of(p.name, [assignment]) == assignment]
    if len(named) == 1:
        return named[0]
    names = ", ".join(p.relative_to(submission).as_posix() for p in found)
    raise SubmissionProblem(f"Your submission holds {len(found)} notebooks ({names}); upload only "
                            f"{assignment}.ipynb.")


def lay_out(notebook: Path, assignment: str, submitted: Path) -> Path:
    """Copy `notebook` into grade's layout under `submitted`, keeping its name; returns the copy."""
    folder = Path(submitted) / STUDENT / assignment
    folder.mkdir(parents=True, exist_ok=True)
    return Path(shutil.copy2(notebook, folder / notebook.name))


def run_grade(course_root: Path, submitted: Path, out: Path, assignment: str,
              separated: bool = False) -> dict:
    """`python -m autograder grade` on the one-submission batch; its grades.json record.

    Its kernels run as the kernel's user wherever they get no namespace sandbox (never open);
    separated (there are no namespaces here, and that user was checked): every kernel runs as that
    user without trying namespaces, and what grade creates is closed to it but for the way to each
    kernel's job folder, which the kernel opens (umask 077)."""
    command = [sys.executable, "-m", "autograder", "--root", str(course_root), "grade",
               str(submitted), "--out", str(out), "--jobs", "1", "--assignment", assignment]
    print("$", " ".join(command), flush=True)
    env = {**os.environ, "AUTOGRADER_ROOT": str(course_root),  # where the probes are (grading/)
           privsep.USER_SETTING: kernel_user.user_name(),
           **({privsep.NO_NAMESPACES_SETTING: "1"} if separated else {})}
    done = subprocess.run(command, stdout=sys.stdout, stderr=sys.stdout, check=False, env=env,
                          umask=0o077 if separated else -1)
    grades = Path(out) / "grades.json"
    if done.returncode != 0 or not grades.is_file():
        raise RuntimeError(f"`python -m autograder grade` exited {done.returncode}; see the log above")
    records = [r for r in json.loads(grades.read_text()) if r["assignment"] == assignment]
    if len(records) != 1:
        raise RuntimeError(f"grades.json holds {len(records)} records for {assignment}, expected one")
    return records[0]


def results_from(record: dict, source_nb, seconds: float = 0.0) -> dict:
    """Gradescope's results.json from one grades.json record and the assignment's source notebook."""
    graded = record["status"] == "graded"
    verification = record.get("verification") or {}
    model = exercises.read(source_nb)
    needs = model.needs()
    tests = []
    for gid, test in model.tests.items():
        name, hidden = test.title or gid, test.hidden
        cell = record.get("cells", {}).get(gid, {})
        score, max_score = float(cell.get("score", 0.0)), float(cell.get("max_score", 0.0))
        if not graded:
            output = f"Not graded: {record['reason']}"
        elif cell.get("error"):
            output = cell["error"]
        else:
            failed = [f"{ex}: {verification[ex]}" for ex in needs.get(gid, [])
                      if verification.get(ex, "passed") != "passed"]
            output = ("Points withdrawn: checked outside your notebook, " + "; ".join(failed)
                      if failed and score < max_score else "")
        tests.append({"name": name, "score": score if graded else 0.0, "max_score": max_score,
                      "output": output, "visibility": HIDDEN_TEST_VISIBILITY if hidden else "visible"})
    for exercise, verdict in verification.items():
        ok = verdict == "passed"
        tests.append({"name": f"Checked outside your notebook: {exercise}",
                      "status": "passed" if ok else "failed",
                      "output": "" if ok else verdict, "visibility": "visible"})
    score = float(record["score"]) if graded else 0.0
    results = {"score": score, "execution_time": round(seconds, 2),
               "output": feedback(record, tests), "output_format": "md",
               "stdout_visibility": "hidden", "tests": tests,
               "extra_data": {"status": record["status"], "warnings": record.get("warnings", [])}}
    validate(results)
    return results


def feedback(record: dict, tests: list[dict]) -> str:
    """The text above the tests: the score, what went wrong, the warnings."""
    lines = [f"**{record['assignment']}: {float(record['score']) if record['status'] == 'graded' else 0:g}"
             f" of {float(record['max_score']):g} points.**"]
    if record["status"] != "graded":
        lines.append(f"Your notebook could not be graded: {record['reason']}")
    lost = [t["name"] for t in tests if "max_score" in t and t["score"] < t["max_score"]]
    if lost and record["status"] == "graded":
        lines.append(f"{len(lost)} test(s) lost points; each says why below. Hidden tests show "
                     "their result once the grades are published.")
    failed = [t["name"].split(": ", 1)[1] for t in tests if t.get("status") == "failed"]
    if failed:
        lines.append("Run again on inputs you never saw, outside your notebook, these exercises "
                     f"failed: {', '.join(failed)}; their tests' points were withdrawn.")
    lines += [f"- {w}" for w in record.get("warnings", [])]
    return "\n\n".join(lines)


def problem_results(problem: str, source_nb, assignment: str) -> dict:
    """results.json for a submission that could not be graded: every test 0, the reason."""
    points = exercises.read(source_nb).test_points()
    record = {"assignment": assignment, "status": "error", "score": 0.0,
              "max_score": sum(points.values()), "reason": problem, "warnings": [],
              "cells": {gid: {"score": 0.0, "max_score": p} for gid, p in points.items()}}
    return results_from(record, source_nb)


def write_results(results: dict, path: Path) -> None:
    """Write results.json whole, replacing whatever is there (a file a kernel planted, a folder
    in its way, a link): a temporary file of a name no one can guess, then a rename."""
    path = Path(path)
    folder = path.parent
    if folder.is_symlink() or (folder.exists() and not folder.is_dir()):
        folder.unlink()
    folder.mkdir(parents=True, exist_ok=True)
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    fd, partial = tempfile.mkstemp(prefix=".results-", suffix=".json", dir=folder)
    with os.fdopen(fd, "w") as f:
        f.write(json.dumps(results, indent=2) + "\n")
    os.chmod(partial, 0o644)
    os.replace(partial, path)


def grade_gradescope(root: Path) -> dict:
    """Grade ROOT/submission/ with the course in ROOT/source/course; write and return results.json.

    results.json is written here, by this process, after `grade` and every kernel it started have
    ended, and every process of the kernel's user was killed, replacing whatever is in its place.
    Without namespaces and without the kernel's user, it is a refusal (0, the reason). A fault of
    the grader itself still writes a valid results.json (0 points, the reason), then raises.
    """
    start = time.perf_counter()
    root = Path(root).resolve()
    target = root / "results" / "results.json"
    source_nb, assignment = None, "the assignment"
    try:
        course = Course(root / "source" / "course")
        assignments = course.assignments()
        if len(assignments) != 1:
            raise RuntimeError(f"{course.source_dir} should hold one assignment, found {assignments}")
        (assignment,) = assignments
        source_nb = read_notebook(course.source_notebook(assignment))
        kernel_user.end()  # whatever an earlier run left
        separated = privsep.namespaces_missing() is not None
        refusal = kernel_user.refusal(root) if separated else None
        try:
            if refusal:
                raise SubmissionProblem(refusal)
            notebook = find_notebook(root / "submission", assignment)
        except SubmissionProblem as problem:
            print(problem, flush=True)
            results = problem_results(str(problem), source_nb, assignment)
        else:
            with tempfile.TemporaryDirectory(prefix="gradescope-") as tmp:
                lay_out(notebook, assignment, Path(tmp) / "submitted")
                record = run_grade(course.root, Path(tmp) / "submitted", Path(tmp) / "out", assignment,
                                   separated)
            results = results_from(record, source_nb, time.perf_counter() - start)
        kernel_user.end()  # what the kernels left (a daemon in a session of its own), before results.json
    except Exception as error:
        reason = (f"The autograder failed ({type(error).__name__}: {str(error)[:300]}); your "
                  "instructor has been told. This is not a grade.")
        results = (problem_results(reason, source_nb, assignment) if source_nb is not None else
                   {"score": 0.0, "output": reason, "output_format": "md", "stdout_visibility": "hidden",
                    "tests": []})
        try:
            kernel_user.end()
        finally:
            write_results(results, target)
        raise
    write_results(results, target)
    return results


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m autograder.classroom.gradescope.results",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, default=Path(os.environ.get(ROOT_ENV) or DEFAULT_ROOT),
                        help=f"the folder laid out as Gradescope's /autograder (default: ${ROOT_ENV}, "
                             "else /autograder)")
    args = parser.parse_args(argv)
    results = grade_gradescope(args.root)
    print(f"results.json: {results['score']:g} points, {len(results['tests'])} tests")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
