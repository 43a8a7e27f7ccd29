"""The grading engine: one submission in, one result record out; many in parallel.

`grade_submission(job)` is the unit of work. It is pure in the sense that matters for
scheduling: everything it needs is in the `GradeJob` (paths and options), it writes only to
its own temporary course folder and to the output folders the job names, and it returns a
`GradeResult` that pickles. It never raises: a broken submission becomes a record with
status "error" and a reason. `run_jobs` maps it over processes today (ProcessPoolExecutor);
a Dask `client.map(grade_submission, jobs)` fits the same interface.

Each job is an nbgrader course of its own: `source/<assignment>` (a link), a copy of the
template gradebook made once from `source/` (see `build_template`), and the submission at
`submitted/<student>/<assignment>/<assignment>.ipynb`, whatever its original name. nbgrader's
Autograde then sanitizes (restores locked and hidden test cells from the gradebook), executes
and scores it; GenerateFeedback writes the HTML when asked.
"""

from __future__ import annotations

import copy
import logging
import multiprocessing
import os
import re
import shutil
import tempfile
import time
import warnings
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from concurrent.futures.process import BrokenProcessPool
from dataclasses import asdict, dataclass, field, replace
from io import StringIO
from pathlib import Path

from nbformat import NotebookNode
from sqlalchemy.exc import SAWarning

from autograder.config import ensure_tools_on_path, load_config
from autograder.notebooks import (
    grade_id,
    is_solution,
    is_test,
    nbgrader,
    read_notebook,
    solution_ids,
    test_points,
    write_notebook,
)

# Markers of why nbgrader gave up on a notebook, as they appear in its log, and what we say.
_FAILURES = (
    ("DeadKernelError", "the kernel died while running the notebook (os._exit, a crash or out of "
                        "memory); no cell could be scored"),
    ("UnresponsiveKernelError", "the kernel stopped responding and could not be interrupted"),
    ("SchemaTooOldError", "the notebook's nbgrader metadata is from an older nbgrader"),
    ("ValidationError", "the notebook's nbgrader metadata is corrupted"),
)


def default_jobs() -> int:
    """One job per available core."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # macOS, Windows
        return max(1, os.cpu_count() or 1)


# -- the template: one generation of every assignment, made once per run ------------------------

@dataclass(frozen=True)
class AssignmentInfo:
    name: str
    tests: dict[str, float]  # test grade_id -> points, in notebook order
    solutions: tuple[str, ...]

    @property
    def max_score(self) -> float:
        return sum(self.tests.values())


@dataclass(frozen=True)
class Template:
    """A course folder where nbgrader generated the assignments: gradebook.db, source/ (links to
    the course's folders), release/ (fresh student versions)."""

    dir: Path
    assignments: dict[str, AssignmentInfo]

    @property
    def gradebook(self) -> Path:
        return self.dir / "gradebook.db"

    def source_notebook(self, assignment: str) -> Path:
        return self.dir / "source" / assignment / f"{assignment}.ipynb"

    def release_notebook(self, assignment: str) -> Path:
        return self.dir / "release" / assignment / f"{assignment}.ipynb"


def _capture(name: str) -> tuple[logging.Logger, StringIO]:
    """A private logger whose records land in a string (nbgrader logs a lot; we keep it)."""
    buffer = StringIO()
    logger = logging.getLogger(f"autograder.{name}.{id(buffer)}")
    logger.handlers = [logging.StreamHandler(buffer)]
    logger.handlers[0].setFormatter(logging.Formatter("[%(levelname)s] %(message)s"))
    logger.setLevel(logging.INFO)
    logger.propagate = False
    return logger, buffer


def _release(logger: logging.Logger) -> None:
    for handler in logger.handlers:
        handler.close()
    logger.handlers = []
    logging.Logger.manager.loggerDict.pop(logger.name, None)


def new_gradebook(path: Path) -> None:
    """Create an empty nbgrader gradebook at `path`, as nbgrader would, without its subprocess.

    On a fresh database nbgrader runs `alembic heads` as a subprocess to stamp the schema
    version: seconds of interpreter start-up, and FileNotFoundError where alembic is not on
    PATH. The same head revision is read here in-process from nbgrader's migration scripts.
    """
    from alembic.script import ScriptDirectory
    from nbgrader.api import Base
    from nbgrader.dbutil import ALEMBIC_DIR
    from sqlalchemy import create_engine, text

    head = ScriptDirectory(ALEMBIC_DIR).get_current_head()
    engine = create_engine(f"sqlite:///{Path(path).resolve()}", future=True)
    try:
        Base.metadata.create_all(bind=engine)
        with engine.begin() as conn:
            conn.execute(text("CREATE TABLE alembic_version (version_num VARCHAR(32) NOT NULL)"))
            conn.execute(text("INSERT INTO alembic_version (version_num) VALUES (:v)"), {"v": head})
    finally:
        engine.dispose()


class GenerationError(RuntimeError):
    """nbgrader generate_assignment failed; the message holds its log."""


def build_template(source_dir: Path, assignments: Sequence[str], dest: Path) -> Template:
    """Run nbgrader generate_assignment for `assignments` in a fresh course folder `dest`."""
    from nbgrader.converters import GenerateAssignment
    from nbgrader.coursedir import CourseDirectory

    ensure_tools_on_path()
    dest = Path(dest).resolve()
    (dest / "source").mkdir(parents=True, exist_ok=True)
    infos = {}
    for assignment in assignments:
        link = dest / "source" / assignment
        if not link.exists():
            link.symlink_to(Path(source_dir).resolve() / assignment, target_is_directory=True)
        nb = read_notebook(link / f"{assignment}.ipynb")
        infos[assignment] = AssignmentInfo(assignment, test_points(nb), tuple(solution_ids(nb)))
    new_gradebook(dest / "gradebook.db")
    config = load_config(dest)
    for assignment in assignments:
        logger, buffer = _capture("generate")
        try:
            coursedir = CourseDirectory(config=config, log=logger)
            coursedir.assignment_id = assignment
            converter = GenerateAssignment(coursedir=coursedir, config=config, log=logger)
            converter.force = True
            converter.create_assignment = True
            converter.start()
        except Exception as error:
            raise GenerationError(f"nbgrader generate_assignment {assignment} failed: {error}\n"
                                  f"{buffer.getvalue()}") from None
        finally:
            _release(logger)
    return Template(dest, infos)


# -- one job ------------------------------------------------------------------------------------

@dataclass(frozen=True)
class GradeJob:
    """Everything one grading run needs. `notebook` may have any name (Colab's `Copy of ...`)."""

    student_id: str
    assignment: str
    notebook: Path
    template_dir: Path
    work_dir: Path
    label: str = "submission"  # check: solution / release / mutant name
    timeout: int | None = None  # seconds per cell; None: nbgrader_config.py's
    restore_missing_cells: bool = True
    feedback_dir: Path | None = None  # write <assignment>.html here
    autograded_dir: Path | None = None  # keep the executed notebook here (instructors only)
    warnings: tuple[str, ...] = ()  # found while collecting the submission; carried to the result
    kernel_server: str | None = None  # socket of a warm kernel server; None: ordinary kernels


@dataclass
class GradeResult:
    """The record of one run. status: graded (every test cell scored) or error (reason says why)."""

    student_id: str
    assignment: str
    label: str
    status: str
    score: float
    max_score: float
    reason: str = ""
    warnings: list[str] = field(default_factory=list)
    cells: dict[str, dict] = field(default_factory=dict)  # grade_id -> score, max_score, error
    seconds: float = 0.0
    log: str = ""

    def to_dict(self) -> dict:
        return asdict(self)


def _safe_id(text: str) -> str:
    """A student id nbgrader's globs and regular expressions cannot trip on."""
    return re.sub(r"[^A-Za-z0-9_-]", "_", text) or "student"


def restore_missing_cells(nb: NotebookNode, source_nb: NotebookNode) -> list[str]:
    """Put back the test and read-only cells a student deleted, in place; returns their ids.

    Each goes right after the nearest cell that precedes it in the source and is still there
    (nbgrader's own add_missing_cells fails when that cell is not a graded one). Solution cells
    are never restored: the source version holds the answer. nbgrader then restores the full
    source, hidden tests included, from the gradebook as for any locked cell.
    """
    present = {grade_id(c) for c in nb.cells if grade_id(c)}
    restored = []
    for index, cell in enumerate(source_nb.cells):
        gid = grade_id(cell)
        if not gid or gid in present or is_solution(cell):
            continue
        if not (is_test(cell) or nbgrader(cell).get("locked")):
            continue
        position = 0
        for previous in reversed(source_nb.cells[:index]):
            pid = grade_id(previous)
            if pid and pid in present:
                position = next(i for i, c in enumerate(nb.cells) if grade_id(c) == pid) + 1
                break
        nb.cells.insert(position, _without_outputs(copy.deepcopy(cell)))
        present.add(gid)
        restored.append(gid)
    return restored


def _without_outputs(cell: NotebookNode) -> NotebookNode:
    if cell.cell_type == "code":
        cell.outputs, cell.execution_count = [], None
    return cell


def _cell_errors(nb: NotebookNode) -> tuple[dict[str, str], list[str]]:
    """(grade_id -> 'Ename: message' of the first error of each graded or solution cell,
    the cells stopped by the timeout, named by grade_id or position)."""
    errors, timed_out = {}, []
    for index, cell in enumerate(nb.cells):
        if cell.cell_type != "code":
            continue
        gid = grade_id(cell)
        raised = [o for o in cell.get("outputs", []) if o.get("output_type") == "error"]
        if any(o.get("ename") == "CellTimeoutError" for o in raised):
            timed_out.append(gid or f"cell {index + 1}")
        if gid and raised:
            message = str(raised[0].get("evalue", "")).strip().splitlines()
            errors[gid] = f"{raised[0].get('ename', 'Error')}: {message[0] if message else ''}"[:300]
    return errors, timed_out


def _failure_reason(log_text: str, error: Exception) -> str:
    for marker, reason in _FAILURES:
        if marker in log_text or marker in repr(error):
            return reason
    errors = [line[len("[ERROR] "):] for line in log_text.splitlines() if line.startswith("[ERROR]")]
    detail = next((e for e in errors if "Traceback" not in e), "") or str(error)
    return f"nbgrader could not grade the notebook: {detail[:300]}"


def grade_submission(job: GradeJob) -> GradeResult:
    """Autograde one notebook in a course folder of its own; never raises."""
    start = time.perf_counter()
    info_points: dict[str, float] = {}
    result = GradeResult(job.student_id, job.assignment, job.label, "error", 0.0, 0.0,
                         warnings=list(job.warnings))
    try:
        source_nb = read_notebook(Path(job.template_dir) / "source" / job.assignment
                                  / f"{job.assignment}.ipynb")
        info_points = test_points(source_nb)
        result.max_score = sum(info_points.values())
        result.cells = {gid: {"score": 0.0, "max_score": pts, "error": ""}
                        for gid, pts in info_points.items()}
        try:
            nb = read_notebook(job.notebook)
        except Exception as error:  # malformed JSON, not a notebook, unreadable file
            result.reason = (f"{Path(job.notebook).name} is not a readable notebook "
                             f"({type(error).__name__}: {str(error).splitlines()[0][:200]})")
            return result
        if job.restore_missing_cells:
            restored = restore_missing_cells(nb, source_nb)
            if restored:
                result.warnings.append("deleted cells restored from the source: "
                                       + ", ".join(restored))
        with warnings.catch_warnings():
            # nbgrader's gradebook trips SQLAlchemy's autoflush warnings on every submission.
            warnings.filterwarnings("ignore", category=SAWarning)
            _autograde(job, nb, result)
    except Exception as error:  # a bug here must not stop a batch either
        result.status = "error"
        result.reason = f"internal error while grading: {type(error).__name__}: {error}"
    finally:
        result.seconds = round(time.perf_counter() - start, 2)
    return result


def _autograde(job: GradeJob, nb: NotebookNode, result: GradeResult) -> None:
    from nbgrader.api import Gradebook
    from nbgrader.converters import Autograde, GenerateFeedback
    from nbgrader.coursedir import CourseDirectory

    ensure_tools_on_path()
    os.environ.setdefault("MPLBACKEND", "Agg")
    assignment, student = job.assignment, _safe_id(job.student_id)
    Path(job.work_dir).mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=f"job-{assignment}-", dir=job.work_dir) as tmp:
        course = Path(tmp)
        (course / "source").mkdir()
        (course / "source" / assignment).symlink_to(
            (Path(job.template_dir) / "source" / assignment).resolve(), target_is_directory=True)
        shutil.copyfile(Path(job.template_dir) / "gradebook.db", course / "gradebook.db")
        write_notebook(nb, course / "submitted" / student / assignment / f"{assignment}.ipynb")
        config = load_config(course, timeout=job.timeout, kernel_server=job.kernel_server,
                             restore_missing_cells=job.restore_missing_cells)
        logger, buffer = _capture("autograde")
        try:
            coursedir = CourseDirectory(config=config, log=logger)
            coursedir.assignment_id, coursedir.student_id = assignment, student
            try:
                Autograde(coursedir=coursedir, config=config, log=logger).start()
            except Exception as error:
                result.log = buffer.getvalue()[-20000:]
                result.reason = _failure_reason(result.log, error)
                return
            autograded = course / "autograded" / student / assignment / f"{assignment}.ipynb"
            errors, timed_out = _cell_errors(read_notebook(autograded))
            with Gradebook(config.CourseDirectory.db_url, config.CourseDirectory.course_id) as gb:
                submission = gb.find_submission_notebook(assignment, assignment, student)
                scores = {g.name: (g.score, g.max_score, g.auto_score) for g in submission.grades}
            unscored = []
            for gid, cell in result.cells.items():
                score, max_score, auto = scores.get(gid, (None, cell["max_score"], None))
                cell["score"] = float(score) if score is not None else 0.0
                cell["max_score"] = float(max_score)
                cell["error"] = errors.get(gid, "")
                if auto is None:
                    unscored.append(gid)
            result.score = round(sum(c["score"] for c in result.cells.values()), 6)
            if timed_out:
                result.warnings.append(f"cells stopped after the {config.Execute.timeout} s limit: "
                                       + ", ".join(timed_out))
            if unscored and job.restore_missing_cells:
                result.reason = "no automatic score for " + ", ".join(unscored)
                return
            result.status = "graded"
            if job.feedback_dir is not None:
                GenerateFeedback(coursedir=coursedir, config=config, log=logger).start()
                html = course / "feedback" / student / assignment / f"{assignment}.html"
                Path(job.feedback_dir).mkdir(parents=True, exist_ok=True)
                shutil.copyfile(html, Path(job.feedback_dir) / f"{assignment}.html")
            if job.autograded_dir is not None:
                Path(job.autograded_dir).mkdir(parents=True, exist_ok=True)
                shutil.copyfile(autograded, Path(job.autograded_dir) / f"{assignment}.ipynb")
        finally:
            if not result.log and result.status != "graded":
                result.log = buffer.getvalue()[-20000:]
            _release(logger)


# -- many jobs ----------------------------------------------------------------------------------

def _crashed(job: GradeJob, why: str) -> GradeResult:
    return GradeResult(job.student_id, job.assignment, job.label, "error", 0.0, 0.0,
                       reason=f"the grading process crashed ({why})", warnings=list(job.warnings))


def _quiet_worker() -> None:
    """Send a worker's stderr, which its kernels inherit, to /dev/null.

    Kernels print start-up chatter there ("Kernel is running over TCP without encryption"),
    sixty times a run; everything that matters is in the result records.
    """
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 2)
    os.close(devnull)


def _pool(workers: int) -> ProcessPoolExecutor:
    # fork: workers start at once, sharing the parent's imports (nbgrader takes ~2 s to import).
    methods = multiprocessing.get_all_start_methods()
    context = multiprocessing.get_context("fork" if "fork" in methods else "spawn")
    return ProcessPoolExecutor(max_workers=workers, mp_context=context, initializer=_quiet_worker)


def run_jobs(jobs: Sequence[GradeJob], n_jobs: int | None = None,
             on_result: Callable[[GradeResult], None] | None = None,
             kernel_server: str | None = None) -> list[GradeResult]:
    """Grade every job, `n_jobs` at a time; results in the order of `jobs`.

    kernel_server: the socket of a running KernelServer (autograder/kernel_server.py), given
    to every job: kernels are then forked warm instead of started cold.

    Jobs always run in worker processes, even with n_jobs=1: the terminal stays quiet and a
    crash cannot take the caller down. A worker that dies takes its pool with it; the jobs it
    left unfinished are then run again one per fresh process, so only the culprit gets an
    error record.
    """
    n_jobs = n_jobs or default_jobs()
    results: list[GradeResult | None] = [None] * len(jobs)

    def done(index: int, result: GradeResult) -> None:
        results[index] = result
        if on_result is not None:
            on_result(result)

    if not jobs:
        return []
    if kernel_server:
        jobs = [replace(job, kernel_server=kernel_server) for job in jobs]
    broken: list[int] = []
    with _pool(min(n_jobs, len(jobs))) as pool:
        futures = {pool.submit(grade_submission, job): i for i, job in enumerate(jobs)}
        for future in as_completed(futures):
            index = futures[future]
            try:
                done(index, future.result())
            except BrokenProcessPool:
                broken.append(index)
            except Exception as error:
                done(index, _crashed(jobs[index], repr(error)))
    for index in sorted(broken):
        with _pool(1) as pool:
            try:
                done(index, pool.submit(grade_submission, jobs[index]).result())
            except Exception as error:
                done(index, _crashed(jobs[index], repr(error)))
    return results  # type: ignore[return-value]
