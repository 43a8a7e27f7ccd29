"""One kernel per submission: the trusted probes run after nbgrader's cells, in the same kernel.

autograder/engine/job.py gives nbgrader's executor the probe's cells as an epilogue
(autograder/engine/execute.py); a second, fresh kernel runs them only where the notebook's own
cells did not all run (a kernel death, a spent budget). Counted here by the kernels the executor
starts, on the fixture assignment (its probe: `scale`, `mean_square`).
"""

from __future__ import annotations

import copy
from pathlib import Path

import nbformat
import pytest
from conftest import copy_fixture_course

from autograder.batch.session import GradingSession
from autograder.course.notebooks import grade_id, is_solution, read_notebook, write_notebook
from autograder.engine import execute
from autograder.engine.execute import EPILOGUE, GradingExecute
from autograder.engine.job import GradeJob, grade_submission
from autograder.engine.template import build_template

pytestmark = pytest.mark.slow
ASSIGNMENT = "00_fixture"


@pytest.fixture(scope="module")
def engine(tmp_path_factory):
    """grade(notebook) -> (GradeResult, kernels started, the autograded notebook), in this process."""
    course = copy_fixture_course(tmp_path_factory.mktemp("one-run") / "course")
    with GradingSession(course, "one-run", n_jobs=1) as session:
        template = build_template(course.source_dir, [ASSIGNMENT], session.dir / "template")
        (session.dir / "jobs").mkdir()
        kept = session.dir / "autograded"

        def grade(nb, student: str):
            path = session.dir / f"{student}.ipynb"
            write_notebook(nb, path)
            started = []
            original = GradingExecute.create_kernel_manager

            def counting(self):
                started.append(1)
                return original(self)

            GradingExecute.create_kernel_manager = counting
            try:
                result = grade_submission(GradeJob(
                    student_id=student, assignment=ASSIGNMENT, notebook=path, template_dir=template.dir,
                    work_dir=session.dir / "jobs", hide=session.hide, course_root=course.root,
                    kernel_server=session.kernel_server, autograded_dir=kept / student))
            finally:
                GradingExecute.create_kernel_manager = original
            return result, len(started), read_notebook(kept / student / f"{ASSIGNMENT}.ipynb")

        yield grade, read_notebook(course.source_notebook(ASSIGNMENT))


def test_an_honest_submission_is_graded_and_probed_in_one_kernel(engine):
    grade, source = engine
    result, kernels, autograded = grade(copy.deepcopy(source), "honest")
    assert (result.status, result.score) == ("graded", result.max_score), result.reason
    assert result.verification == {"scale": "passed", "mean_square": "passed"}
    assert kernels == 1
    # The probe's cells ran in that kernel but are no part of the notebook nbgrader scored and kept.
    sources = "\n".join(cell.source for cell in autograded.cells)
    assert "__autograder_run" not in sources and "autograder.probes" not in sources
    assert not any(cell.get("metadata", {}).get(EPILOGUE) for cell in autograded.cells)


def test_a_wrong_answer_still_loses_the_points_the_probe_withdraws(engine):
    """A `mean_square` that fools the notebook's tests (it special-cases their inputs) is caught by
    the probe run in the same kernel."""
    grade, source = engine
    nb = copy.deepcopy(source)
    cell = next(c for c in nb.cells if is_solution(c) and grade_id(c) == "mean_square")
    cell.source = ("def mean_square(x):\n"
                   "    known = {(1.0, 3.0): 5.0, (-2.0, 0.0, 2.0, 4.0): 6.0}  # the tests' inputs\n"
                   "    return known.get(tuple(float(v) for v in x), 0.0)\n")
    result, kernels, _ = grade(nb, "fools_the_tests")
    assert kernels == 1
    assert result.verification["scale"] == "passed"
    assert result.verification["mean_square"] != "passed"
    assert all(result.cells[gid]["score"] == 0 for gid in result.cells if "mean_square" in gid)
    assert any(w.startswith("points withdrawn") and "test_mean_square" in w for w in result.warnings)


def test_a_kernel_that_dies_in_the_notebook_gets_a_fresh_kernel_for_the_probes(engine):
    """The notebook's own cells did not all run: the probes cannot run after them, so the engine
    runs the student's code again in a fresh kernel, and the exercises before the death pass."""
    grade, source = engine
    nb = copy.deepcopy(source)
    cell = next(c for c in nb.cells if is_solution(c) and grade_id(c) == "mean_square")
    cell.source += "\n\nimport os\n\nos._exit(1)\n"
    result, kernels, _ = grade(nb, "dies")
    assert kernels >= 2
    assert result.verification["scale"] == "passed"
    assert result.verification["mean_square"].startswith("not checked: the kernel died")
    assert result.score == sum(c["max_score"] for gid, c in result.cells.items() if "scale" in gid) > 0


def test_the_feed_answers_the_epilogue_only(tmp_path):
    """The probe's feed (06's batches) answers input() in the epilogue's cells; the notebook's own
    cells get nbgrader's stdin, none, as before."""
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(
        "try:\n    got = input('batch')\nexcept Exception as error:\n    got = type(error).__name__\nprint(got)")])
    report: dict = {}
    executor_class = type("JobExecute", (GradingExecute,), {
        "epilogue": ("print(input('batch'))",), "report": report,
        "feed": staticmethod(lambda prompt: f"answer to {prompt}")})
    executor_class(kernel_name="python3", timeout=30).preprocess(nb, {"metadata": {"path": str(tmp_path)}})
    assert len(nb.cells) == 1  # the epilogue's cell is gone from the notebook
    assert "".join(o.get("text", "") for o in nb.cells[0].outputs).strip() == "StdinNotImplementedError"
    assert report == {"notebook_ran": True, "epilogue_ran": True}


def test_a_spent_budget_leaves_the_epilogue_unrun_and_says_so(tmp_path):
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("import time\n\ntime.sleep(60)")])
    report: dict = {}
    executor_class = type("JobExecute", (GradingExecute,), {"epilogue": ("print('probe')",), "report": report})
    executor_class(kernel_name="python3", timeout=30, notebook_budget=10, interrupt_grace=2).preprocess(
        nb, {"metadata": {"path": str(tmp_path)}})
    assert report == {"notebook_ran": False, "epilogue_ran": False}
    assert execute.budget_overruns(nb)


def test_the_epilogue_is_not_cut_by_the_notebooks_budget(tmp_path):
    """The probes get their cell timeout, not what is left of the notebook's budget: an epilogue
    longer than the whole budget still runs to its end."""
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("x = 1")])
    report: dict = {}
    executor_class = type("JobExecute", (GradingExecute,), {
        "epilogue": ("import time\n\ntime.sleep(13)\nprint('probe done')",), "report": report})
    executor_class(kernel_name="python3", timeout=30, notebook_budget=12, interrupt_grace=2).preprocess(
        nb, {"metadata": {"path": str(Path(tmp_path))}})
    assert report == {"notebook_ran": True, "epilogue_ran": True}
