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


def _epilogue_with_a_late_feed(tmp_path, epilogue: str, late: float, timeout: int,
                               **options) -> tuple[dict, list, float]:
    """Run `epilogue` after a one-cell notebook, its input() answered `late` seconds late (a busy
    grader); (report, the epilogue cell's outputs, seconds it took)."""
    import time

    def feed(prompt):
        time.sleep(late)
        return f"answer to {prompt}"

    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("x = 1")])
    report: dict = {}
    seen: list = []

    class JobExecute(GradingExecute):
        def preprocess_cell(self, cell, resources, index):
            cell, resources = super().preprocess_cell(cell, resources, index)
            if cell.get("metadata", {}).get(EPILOGUE):
                seen.extend(cell.get("outputs", []))
            return cell, resources

    JobExecute.epilogue, JobExecute.report, JobExecute.feed = (epilogue,), report, staticmethod(feed)
    start = time.monotonic()
    JobExecute(kernel_name="python3", timeout=timeout, interrupt_grace=2, **options).preprocess(
        nb, {"metadata": {"path": str(tmp_path)}})
    return report, seen, time.monotonic() - start


def test_the_time_a_probe_waits_on_the_feed_is_not_counted_against_its_cell(tmp_path):
    """Beside a busy neighbour, 06's trusted run timed out while its kernel waited for the grader's
    answers (1,230 batches, each a round trip), and a right challenge lost 5 points. Here 30 answers
    come 0.25 s late each: 7.5 s of waiting in a cell with a 3 s timeout runs to its end."""
    report, outputs, _ = _epilogue_with_a_late_feed(
        tmp_path, "got = [input(f'batch {k}') for k in range(30)]\nprint(len(got), 'answers')", 0.25, 3)
    text = "".join(o.get("text", "") for o in outputs)
    assert "30 answers" in text and not [o for o in outputs if o.get("output_type") == "error"], outputs
    assert report == {"notebook_ran": True, "epilogue_ran": True}


def test_a_probe_that_waited_on_the_feed_is_still_stopped_when_it_then_spins(tmp_path):
    """The wait extends the timeout, it does not lift it: a cell that waits 2.5 s on the feed, then
    never ends, is interrupted (at 3 + 2.5 s; feed_wait_limit bounds what a wrong count could add)."""
    report, outputs, took = _epilogue_with_a_late_feed(
        tmp_path, "got = [input(f'batch {k}') for k in range(10)]\nwhile True:\n    pass", 0.25, 3,
        feed_wait_limit=10)
    assert [o for o in outputs if o.get("output_type") == "error"], outputs
    assert took < 60, took  # the kernel's start, the interrupt, a busy machine
