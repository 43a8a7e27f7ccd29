"""`python -m autograder new`: a scaffolded assignment passes `check` at once, and `check`'s gates hold on it."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from conftest import copy_fixture_course

from autograder.authoring.new import scaffold
from autograder.course import kinds
from autograder.course.layout import CourseError
from autograder.course.notebooks import read_notebook, write_notebook

ASSIGNMENT = "09_softmax"
REPO = Path(__file__).resolve().parents[2]


def autograder(course_root: Path, *args: str) -> subprocess.CompletedProcess:
    """python -m autograder with the course at `course_root`, run from outside it (its helpers/
    folder holds only references, not the package). Only `--root` names the course: the probes
    must be read from there, not from $AUTOGRADER_ROOT or this checkout."""
    env = {k: v for k, v in os.environ.items() if k != "AUTOGRADER_ROOT"} | {"MPLBACKEND": "Agg"}
    return subprocess.run([sys.executable, "-m", "autograder", "--root", str(course_root), *args],
                          cwd=course_root.parent, env=env, capture_output=True, text=True, timeout=600)


@pytest.fixture
def course(tmp_path):
    course = copy_fixture_course(tmp_path / "course")
    shutil.copyfile(REPO / "pyproject.toml", course.root / "pyproject.toml")
    return course


def test_new_writes_the_three_places_and_nothing_else(course):
    before = {p for p in course.root.rglob("*")}
    written = scaffold(course, ASSIGNMENT)
    after = {p for p in course.root.rglob("*")} - before
    assert set(written) == {course.source_dir / ASSIGNMENT, course.root / "helpers" / "reference" / "softmax.py",
                            course.root / "grading" / ASSIGNMENT}
    assert all(any(p == w or w in p.parents for w in written) or p in {w.parent for w in written}
               or p == course.root / "helpers" for p in after), sorted(map(str, after))
    probe = (course.root / "grading" / ASSIGNMENT / "probe.py").read_text()
    assert f'assignment="{ASSIGNMENT}"' in probe and '"helpers.reference.softmax"' in probe
    assert "NN_topic" not in json.dumps(nbformat.read(course.source_notebook(ASSIGNMENT), 4))
    assert len(list((course.root / "grading" / ASSIGNMENT / "mutants").glob("*.py"))) >= 4
    assert set(kinds.read(course.root, ASSIGNMENT)) == {"softplus"}  # every exercise has its kind


@pytest.mark.parametrize("name", ["9_x", "09-softmax", "09_Softmax", "softmax", "00_fixture"])
def test_new_refuses_a_bad_or_taken_name_and_writes_nothing(course, name):
    before = sorted(str(p) for p in course.root.rglob("*"))
    with pytest.raises(CourseError, match="not an assignment name|exists already"):
        scaffold(course, name)
    assert sorted(str(p) for p in course.root.rglob("*")) == before


@pytest.mark.slow
def test_a_scaffolded_assignment_passes_check_and_check_fails_closed_once_filled(course):
    made = autograder(course.root, "new", ASSIGNMENT)
    assert made.returncode == 0, made.stdout + made.stderr
    assert course.release_notebook(ASSIGNMENT).is_file()

    checked = autograder(course.root, "check", ASSIGNMENT, "--jobs", "2")
    assert checked.returncode == 0, checked.stdout + checked.stderr
    (report,) = json.loads((course.root / "build" / "course-report.json").read_text())
    assert (report["assignment"], report["solution_score"], report["release_score"]) == (ASSIGNMENT, 3, 0)
    assert report["mutants_caught"] == report["mutants_total"] >= 4

    # The author fills the notebook with a second exercise but forgets its probe: check fails, naming it.
    path = course.source_notebook(ASSIGNMENT)
    nb = read_notebook(path)
    cell = nbformat.v4.new_code_cell("def softsign(x):\n    ### BEGIN SOLUTION\n    return x / (1 + abs(x))\n"
                                     "    ### END SOLUTION")
    cell.metadata["nbgrader"] = {"grade": False, "grade_id": "softsign", "locked": False,
                                 "schema_version": 3, "solution": True, "task": False}
    nb.cells.insert(-1, cell)
    write_notebook(nb, path)
    assert autograder(course.root, "release", ASSIGNMENT).returncode == 0
    checked = autograder(course.root, "check", ASSIGNMENT, "--jobs", "2")
    assert checked.returncode != 0
    assert "softsign" in checked.stdout + checked.stderr and ASSIGNMENT in checked.stdout + checked.stderr


@pytest.mark.slow
def test_new_updates_the_readme_blocks_so_that_publish_does_not_refuse(tmp_path, capsys):
    """After `new`, the README's Colab table was stale and `publish` refused until `configure`
    ran; neither `new` nor docs/authoring.md said so."""
    from autograder.__main__ import main
    from autograder.authoring.agreement import disagreements
    from tests.authoring.test_configure import full_course_copy

    course = full_course_copy(tmp_path / "course")
    assert disagreements(course, release=False) == []
    assert main(["new", ASSIGNMENT, "--root", str(course.root)]) == 0
    out = capsys.readouterr().out
    assert "updated README.md's generated blocks" in out
    assert "[tool.course.release]" in out and "python -m autograder configure" in out
    assert disagreements(course, release=False) == []
    assert f"{ASSIGNMENT}/{ASSIGNMENT}.ipynb" in (course.root / "README.md").read_text()


def _worked_example_solution() -> str:
    """The solution cell docs/authoring.md's worked example writes (its first python block there)."""
    text = (REPO / "docs" / "authoring.md").read_text(encoding="utf-8")
    example = text[text.index("### A worked example"):]
    block = example[example.index("```python\n") + len("```python\n"):]
    return "\n".join(line[3:] if line.startswith("   ") else line
                     for line in block[:block.index("```")].splitlines())


def test_the_worked_example_passes_the_one_line_rule_of_make_test(course):
    """issue 39, 6: following docs/authoring.md's worked example passed `check` and failed
    `make test`: its one exercise, one line long, carried 100 % of the notebook's points."""
    from tests.test_one_line_share import LIMIT, one_line_share

    scaffold(course, ASSIGNMENT)
    nb = read_notebook(course.source_notebook(ASSIGNMENT))
    assert one_line_share(nb)[0] <= LIMIT  # the scaffold as `new` writes it
    solution = _worked_example_solution()
    assert solution.startswith("def attention_weights(q, k):")
    for cell in nb.cells:  # the exercise renamed, its tests with it (points 1 and 2, as there)
        meta = cell.metadata.get("nbgrader", {})
        if "softplus" in meta.get("grade_id", ""):
            meta["grade_id"] = meta["grade_id"].replace("softplus", "attention_weights")
        if meta.get("grade_id") == "attention_weights":
            cell.source = solution
    share, one_line = one_line_share(nb)
    assert share <= LIMIT, one_line
    guide = (REPO / "docs" / "authoring.md").read_text(encoding="utf-8")
    assert "tests/test_one_line_share.py" in guide and "10 %" in guide  # the rule, where authors read
