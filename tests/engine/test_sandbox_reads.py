"""What a kernel can read is an allow-list (finding 6 of issue 37): not the machine minus the hidden paths.

The sandbox once hid a deny-list (the course's root, this checkout, HOME, the outputs) and showed
the rest of the machine read-only: another checkout of the course, or an earlier `--out` folder
elsewhere, was readable (`runpy.run_path` of another checkout's `helpers/reference/optim.py` from an
empty 05 notebook scored 14/14; other students' grades were readable). Planted outside /tmp (each
kernel has a /tmp of its own), with benign markers: a fake other checkout and a fake earlier output
folder that no grading setting names; a graded submission tries to read both.
"""

from __future__ import annotations

import copy
import os
import secrets
import sys
import textwrap
from pathlib import Path

import nbformat
import pytest

from autograder.course.notebooks import grade_id, read_notebook
from autograder.course.settings import REPO_ROOT
from autograder.engine import sandbox
from autograder.engine.execute import GradingExecute
from autograder.engine.job import GradeJob, grade_submission
from autograder.engine.template import build_template

PROBLEM = "; ".join(p for p in sandbox.problems() if "not sandboxed" in p or "can read" in p)
needs_namespaces = pytest.mark.skipif(bool(PROBLEM), reason=PROBLEM)
SOURCE = Path(__file__).parents[1] / "fixtures" / "course" / "source"
TOKEN = secrets.token_hex(6)
ANSWER = f"reference-{TOKEN}"
GRADES = f"alice,05_optim,14.0,14.0,{TOKEN}"

READ = """
import os, runpy
def attempt(what, action):
    try:
        found = action()
        print("ATTACK", what, "ok" if found else "empty")
    except Exception as error:
        print("ATTACK", what, "denied", type(error).__name__)
attempt("open-reference", lambda: {answer!r} in open({reference!r}).read())
attempt("runpy-reference", lambda: runpy.run_path({reference!r})["ANSWER"] == {answer!r})
attempt("list-checkout", lambda: os.listdir({checkout!r}))
attempt("open-grades", lambda: {token!r} in open({grades!r}).read())
attempt("list-outputs", lambda: os.listdir({outputs!r}))
attempt("list-home", lambda: os.listdir("/home"))
attempt("list-srv", lambda: os.listdir("/srv"))
attempt("list-var", lambda: os.listdir("/var"))
"""


@pytest.fixture
def planted(outside_tmp):
    """(another checkout, its reference file, an earlier output folder, its grades.csv)."""
    checkout = outside_tmp / "other-course"
    reference = checkout / "helpers" / "reference" / "optim.py"
    reference.parent.mkdir(parents=True)
    reference.write_text(f"ANSWER = {ANSWER!r}\n")
    outputs = outside_tmp / "old-grades"
    grades = outputs / "grades.csv"
    outputs.mkdir()
    grades.write_text(f"student_id,assignment,score,max_score,note\n{GRADES}\n")
    for path in (checkout, reference.parent, outputs):
        os.chmod(path, 0o755)
    return checkout, reference, outputs, grades


def attack(planted) -> str:
    checkout, reference, outputs, grades = planted
    return READ.format(answer=ANSWER, reference=str(reference), checkout=str(checkout), token=TOKEN,
                       grades=str(grades), outputs=str(outputs))


def report(printed: str) -> dict[str, str]:
    return dict(line.split(" ", 2)[1:] for line in printed.splitlines() if line.startswith("ATTACK "))


@needs_namespaces
@pytest.mark.slow
def test_a_graded_submission_reads_no_other_checkout_and_no_earlier_output(planted, tmp_path):
    """As `grade` grades it: the job's hide names this course and its outputs, not the planted
    folders; they stay out of sight because nothing but what a kernel needs is in its view."""
    template = build_template(SOURCE, ["00_fixture"], tmp_path / "template")
    nb = copy.deepcopy(read_notebook(template.source_notebook("00_fixture")))
    cell = next(c for c in nb.cells if grade_id(c) == "scale")
    cell.source = attack(planted) + textwrap.dedent("""
        def scale(x, factor):
            return x * factor
    """)
    path = tmp_path / "in" / "00_fixture.ipynb"
    path.parent.mkdir()
    nbformat.write(nb, path)
    result = grade_submission(GradeJob(
        student_id="mallory", assignment="00_fixture", notebook=path, template_dir=template.dir,
        work_dir=tmp_path / "work", autograded_dir=tmp_path / "out", hide=(str(SOURCE.resolve()),)))
    assert result.status == "graded", result.reason
    graded = read_notebook(tmp_path / "out" / "00_fixture.ipynb")
    printed = "".join(o.get("text", "") for o in next(c for c in graded.cells if grade_id(c) == "scale").outputs)
    found = report(printed)
    assert set(found) == {"open-reference", "runpy-reference", "list-checkout", "open-grades",
                          "list-outputs", "list-home", "list-srv", "list-var"}, printed
    assert {what: how.split()[0] for what, how in found.items()} == dict.fromkeys(found, "denied"), printed


def view(job: Path, code: str) -> list[str]:
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(code)])
    GradingExecute(kernel_name="python3", timeout=60, hide=[str(job / "nothing")]).preprocess(
        nb, {"metadata": {"path": str(job)}})
    assert not [o for o in nb.cells[0].outputs if o.output_type == "error"], nb.cells[0].outputs
    return "".join(o.get("text", "") for o in nb.cells[0].outputs).splitlines()


@needs_namespaces
def test_a_kernel_sees_the_system_its_environment_and_its_job_and_nothing_else(outside_tmp):
    """The machine's writable and private trees are not in a kernel's view, unless the environment
    lives there; this checkout shows only what kernels import (and the environment, if it is here)."""
    job = outside_tmp / "job"
    job.mkdir()
    code = textwrap.dedent(f"""
        import os
        print(sorted(os.listdir("/")))
        print(sorted(os.listdir({str(REPO_ROOT)!r})))
        print(sorted(os.listdir({str(REPO_ROOT / "autograder")!r})))
        print(sorted(os.listdir({str(outside_tmp)!r})))
        print(sorted(os.listdir({str(outside_tmp.parent)!r})))
    """)
    top, checkout, package, outside, beside = (eval(line) for line in view(job, code))
    environment = {Path(p).resolve() for p in (sys.prefix, sys.base_prefix)}
    on_path = {Path(p).resolve() for p in sys.path if p and os.path.isabs(p)}  # where packages may lie
    for private in ("home", "root", "srv", "var", "opt", "mnt", "media", "work"):
        if not any(p.is_relative_to("/" + private) for p in (REPO_ROOT, outside_tmp.resolve(), *environment, *on_path)):
            assert private not in top, top
    kept = {"autograder", "helpers"} | {p.relative_to(REPO_ROOT).parts[0] for p in environment
                                        if p.is_relative_to(REPO_ROOT)}
    assert set(checkout) == kept, checkout  # no source/, grading/, .git, build/
    assert {name for name in package if not name.startswith("__pycache__")} == {"__init__.py", "probes"}
    assert outside == ["job"], outside  # only its own job in the folder that holds it,
    assert beside == [outside_tmp.name], beside  # and nothing else of the folder that holds that
