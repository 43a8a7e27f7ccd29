"""Kernels that die, hang or eat memory cost only the cells they did not reach (autograder/engine/execute.py).

Graded as a student hands it in (warm kernels, the fixture assignment): `scale` (3 points:
test_scale, test_scale_hidden) comes before `mean_square` (3 points). Each faulty submission
answers `scale` right and breaks in `mean_square`: it must keep scale's 3 points, and the batch
must finish in bounded time. Cold kernels (no server: limits set by the launcher) run the same
faults in small notebooks without torch, which start in a second.
"""

from __future__ import annotations

import copy
import time
from pathlib import Path

import nbformat
import pytest

from autograder.batch.session import run_jobs
from autograder.course.notebooks import grade_id, read_notebook
from autograder.engine.execute import (
    KERNEL_DIED,
    NOT_RUN,
    OUT_OF_TIME,
    GradingExecute,
    budget_overruns,
    kernel_deaths,
)
from autograder.engine.job import GradeJob
from autograder.engine.kernel_server import KernelServer
from autograder.engine.template import build_template

pytestmark = pytest.mark.slow
TIMEOUT, GRACE = 8, 2  # seconds per cell; seconds a kernel gets to obey the interrupt

FAULTS = {
    "exits": "print('leaving now')\nimport os\n\nos._exit(1)",
    "segfaults": "import ctypes\n\nctypes.string_at(0)",
    "ignores_sigint": "import signal\n\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\nwhile True:\n    pass",
    # 50 GB in 1 GB pieces, never touched (calloc): quick and harmless, yet only the memory
    # limit stops it; without one it would succeed (overcommit) and the test fail.
    "hogs_memory": "import numpy as np\n\nchunks = [np.zeros(10**9, np.uint8) for _ in range(50)]",
}
SOURCE = Path(__file__).parents[1] / "fixtures" / "course" / "source"


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    """{fault: (GradeResult, autograded notebook)}, graded in one batch with warm kernels."""
    root = tmp_path_factory.mktemp("faults")
    template = build_template(SOURCE, ["00_fixture"], root / "template")
    source = read_notebook(template.source_notebook("00_fixture"))
    jobs = []
    with pytest.MonkeyPatch.context() as patch, KernelServer(enabled=True) as server:
        assert server.socket is not None
        patch.setenv("AUTOGRADER_INTERRUPT_GRACE", str(GRACE))
        for fault, code in FAULTS.items():
            nb = copy.deepcopy(source)
            next(c for c in nb.cells if grade_id(c) == "mean_square").source = code
            path = root / "in" / f"{fault}.ipynb"
            path.parent.mkdir(parents=True, exist_ok=True)
            nbformat.write(nb, path)
            jobs.append(GradeJob(student_id=fault, assignment="00_fixture", notebook=path,
                                 template_dir=template.dir, work_dir=root / "work",
                                 timeout=TIMEOUT, autograded_dir=root / "out" / fault))
        results = run_jobs(jobs, 2, kernel_server=server.socket)
    out = {}
    for job, result in zip(jobs, results):
        notebook = job.autograded_dir / "00_fixture.ipynb"
        out[job.student_id] = (result, read_notebook(notebook) if notebook.is_file() else None)
    return out


def errors(nb, gid):
    cell = next(c for c in nb.cells if grade_id(c) == gid)
    return [o for o in cell.outputs if o.output_type == "error"]


@pytest.mark.parametrize("fault", ["exits", "segfaults", "ignores_sigint"])
def test_a_dead_or_stopped_kernel_keeps_the_points_before_it(graded, fault):
    result, nb = graded[fault]
    assert (result.status, result.score, result.max_score) == ("graded", 3.0, 6.0), result.reason
    assert {gid: c["score"] for gid, c in result.cells.items()} == {
        "test_scale": 1, "test_scale_hidden": 2, "test_mean_square": 0, "test_mean_square_hidden": 0}
    (died,) = errors(nb, "mean_square")
    assert died.ename == KERNEL_DIED
    for gid in ("test_mean_square", "test_mean_square_hidden", "summary"):
        assert [(o.ename, o.evalue) for o in errors(nb, gid)] == [
            (NOT_RUN, "not run: the kernel died in an earlier cell (mean_square)")]
    assert "not run" in result.cells["test_mean_square"]["error"]
    what = "was stopped" if fault == "ignores_sigint" else "died"
    assert kernel_deaths(nb) == [f"the kernel {what} in mean_square; 3 later cell(s) not run, "
                                 "the points before it kept"]


def test_the_dying_cells_output_and_a_message_for_the_student_are_kept(graded):
    _, nb = graded["exits"]
    cell = next(c for c in nb.cells if grade_id(c) == "mean_square")
    assert "os._exit" in cell.outputs[-1].evalue and "4 GiB of memory" in cell.outputs[-1].evalue
    _, nb = graded["ignores_sigint"]
    assert f"past its {TIMEOUT} s limit" in errors(nb, "mean_square")[0].evalue


def test_a_loop_that_ignores_sigint_is_stopped_after_timeout_plus_grace(graded):
    result, _ = graded["ignores_sigint"]
    # Without the grace and kill, mean_square and the three cells after it would each wait out
    # the timeout: over 4 * TIMEOUT seconds.
    assert result.seconds < 3 * TIMEOUT, result.seconds


def test_a_memory_hog_gets_a_memory_error_and_the_notebook_goes_on(graded):
    result, nb = graded["hogs_memory"]
    assert (result.status, result.score) == ("graded", 3.0)
    assert [o.ename for o in errors(nb, "mean_square")] == ["MemoryError"]
    # The kernel lived on: the next cells ran (and failed, mean_square being undefined).
    assert [o.ename for o in errors(nb, "test_mean_square")] == ["NameError"]
    assert kernel_deaths(nb) == []


def test_a_notebook_stops_at_its_time_budget_and_later_cells_are_not_run(tmp_path):
    cells = ["print('first')", "import time\n\ntime.sleep(60)", "print('never')", "1 + 1"]
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])
    budget = 12  # kernel start included: a cold sandboxed kernel on a busy machine takes several seconds
    executor = GradingExecute(timeout=30, notebook_budget=budget, interrupt_grace=GRACE,
                              kernel_name="python3")
    start = time.monotonic()
    executor.preprocess(nb, {"metadata": {"path": str(tmp_path)}})
    assert time.monotonic() - start < budget + GRACE + 5
    assert stream_text(nb.cells[0]) == "first\n"
    names = [o.ename for o in nb.cells[1].outputs if o.output_type == "error"]
    assert OUT_OF_TIME in names and "CellTimeoutError" not in names  # beside the KeyboardInterrupt
    for cell in nb.cells[2:]:
        assert [(o.ename, o.evalue) for o in cell.outputs] == [
            (NOT_RUN, f"not run: the notebook's time budget of {budget} s was spent")]
    assert budget_overruns(nb) == [f"the notebook's time budget of {budget} s ran out in cell 2; "
                                   "2 cell(s) not run, the points before kept"]
    assert kernel_deaths(nb) == []


def stream_text(cell) -> str:
    """What a cell printed: print() writes its text and its newline apart, and on a busy machine
    they can arrive as two outputs."""
    return "".join(o.get("text", "") for o in cell.outputs if o.get("output_type") == "stream")


def run_cold(tmp_path, cells: list[str], **settings):
    """Execute `cells` with GradingExecute and a cold kernel; returns the notebook and seconds."""
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])
    executor = GradingExecute(kernel_name="python3", **{"timeout": 30, "interrupt_grace": GRACE,
                                                        **settings})
    start = time.monotonic()
    executor.preprocess(nb, {"metadata": {"path": str(tmp_path)}})
    return nb, time.monotonic() - start


@pytest.mark.parametrize("fault", ["exits", "segfaults", "ignores_sigint", "hogs_memory"])
def test_cold_kernels_survive_the_same_faults(tmp_path, fault):
    timeout = 3
    nb, seconds = run_cold(tmp_path, ["print('before')", FAULTS[fault], "print('after')"],
                           timeout=timeout)
    assert stream_text(nb.cells[0]) == "before\n"
    names = [o.ename for o in nb.cells[1].outputs if o.output_type == "error"]
    # print() writes its text and its newline apart: on a busy machine they can arrive as two outputs.
    after = ([o.ename for o in nb.cells[2].outputs if o.output_type == "error"],
             "".join(o.get("text", "") for o in nb.cells[2].outputs if o.output_type == "stream"))
    if fault == "hogs_memory":  # RLIMIT_DATA, set by the launcher before it execs the kernel
        assert (names, after) == (["MemoryError"], ([], "after\n"))
    else:
        assert (names, after) == ([KERNEL_DIED], ([NOT_RUN], ""))
    if fault == "ignores_sigint":
        assert seconds < timeout + GRACE + 10, seconds


def test_a_kernel_past_its_cpu_limit_dies_and_the_cells_before_keep_their_results(tmp_path):
    nb, _ = run_cold(tmp_path, ["print('before')", "while True:\n    pass", "print('after')"],
                     cpu_limit=3)
    assert stream_text(nb.cells[0]) == "before\n"
    (died,) = [o for o in nb.cells[1].outputs if o.output_type == "error"]
    assert died.ename == KERNEL_DIED and "3 s of CPU time" in died.evalue
    assert nb.cells[2].outputs[0].ename == NOT_RUN


def test_what_a_cell_prints_in_pieces_is_kept_as_one_output(tmp_path):
    """A print arrives in pieces (its text and its newline apart, or flushed as it goes): each run of
    one stream becomes one output, so the same answer graded twice gives the same notebook and the
    same feedback page; a 3 MB line is joined in linear time (nbclient's coalesce_streams took
    minutes over it)."""
    nb, seconds = run_cold(tmp_path, ["import sys, time\nfor i in range(3):\n"
                                      "    print('piece', i, end=' ', flush=True)\n    time.sleep(0.3)\n"
                                      "print('done')\nsys.stdout.flush()\ntime.sleep(0.3)\n"
                                      "print('10%\\r100%', file=sys.stderr)",
                                      "print('y' * 3_000_000)"])
    streams = [(o.name, o.text) for o in nb.cells[0].outputs if o.output_type == "stream"]
    assert streams == [("stdout", "piece 0 piece 1 piece 2 done\n"), ("stderr", "10%\r100%\n")]
    assert [o.output_type for o in nb.cells[1].outputs] == ["stream"]
    assert seconds < 30
