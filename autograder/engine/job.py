"""The grading engine: one submission in, one result record out; many in parallel.

`grade_submission(job)` is the unit of work. It is pure in the sense that matters for
scheduling: everything it needs is in the `GradeJob` (paths and options), it writes only to
its own temporary course folder and to the output folders the job names, and it returns a
`GradeResult` that pickles. It never raises: a broken submission becomes a record with
status "error" and a reason. autograder/batch/session.py maps it over a backend
(autograder/batch/backends.py): worker processes here by default, or a Dask cluster.

Each job is an nbgrader course of its own: `source/<assignment>` (a link, for the files
nbgrader copies beside the notebook), a copy of the template gradebook (autograder/engine/template.py)
and the submission at `submitted/<student>/<assignment>/<assignment>.ipynb`, whatever its
original name. nbgrader's Autograde then sanitizes it (drops duplicated cells, restores deleted
ones, restores locked cells and hidden tests from the gradebook: the pipeline of
autograder/nbgrader_config.py, the same as `nbgrader autograde` with that file), executes it
and scores it; the feedback page is made when asked, in a child process with limits
(autograder/engine/page_server.py: the notebook is the student's).
"""

from __future__ import annotations

import copy
import importlib
import json
import os
import re
import secrets
import shutil
import tempfile
import time
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from enum import Enum
from pathlib import Path

import nbformat
from nbformat import NotebookNode
from sqlalchemy.exc import SAWarning

from autograder.course import exercises
from autograder.course.notebooks import (
    grade_id,
    read_notebook,
    write_notebook,
)
from autograder.engine.drop_duplicate_cells import drop_duplicate_cells
from autograder.engine.execute import budget_overruns, kernel_deaths
from autograder.engine.nbgrader_setup import ensure_tools_on_path, load_config, nbgrader_log
from autograder.engine.page_server import make_page
from autograder.engine.restore_missing_cells import restore_missing_cells
from autograder.engine.template import course_from_template

# What a job imports when it first runs, lazily (a caller that only builds jobs does not pay for
# them): nbgrader's converters, and the trusted run, whose probes bring torch and helpers. A pool
# imports them before it starts its workers, which then share them (autograder/batch/backends.py):
# a worker that imported them itself spent about 4 CPU-seconds on its first job (measured here).
FIRST_JOB_IMPORTS = ("nbgrader.converters", "nbgrader.preprocessors", "nbgrader.api",
                     "autograder.engine.verify")


def import_what_a_job_needs() -> None:
    """Import FIRST_JOB_IMPORTS in this process (before forking workers from it). One that fails
    is skipped, as the forkserver skips it: the job that needs it reports the error as its own."""
    for module in FIRST_JOB_IMPORTS:
        try:
            importlib.import_module(module)
        except ImportError:
            pass


class Failure(str, Enum):
    """Why a run gave no grade (GradeResult.failure); `reason` says it in words for people.

    A str Enum: it pickles to the workers and back and reads and writes as JSON (the journal).
    """

    NONE = ""
    UNREADABLE = "unreadable"  # not a notebook (malformed JSON, unreadable file)
    DEAD_KERNEL = "dead_kernel"  # the kernel died before the first cell ran
    UNRESPONSIVE = "unresponsive"  # the kernel stopped answering and could not be interrupted
    OLD_METADATA = "old_metadata"  # nbgrader metadata from an older nbgrader
    BAD_METADATA = "bad_metadata"  # nbgrader metadata corrupted
    UNSCORED = "unscored"  # a test cell got no automatic score
    NBGRADER = "nbgrader"  # nbgrader failed for another reason (its log says which)
    INTERNAL = "internal"  # a bug in the grader
    CRASHED = "crashed"  # the grading process died under the job (autograder/batch/backends.py)

    @property
    def transient(self) -> bool:
        """Says nothing about the submission: grade it again next time, never journal it."""
        return self in (Failure.INTERNAL, Failure.CRASHED)


# nbgrader's exceptions, as its log names them, and what they mean. A kernel that dies in a
# cell costs only the cells from there (autograder/engine/execute.py): DeadKernelError here is one
# that died before the first cell ran.
_NBGRADER_ERRORS = {
    "DeadKernelError": Failure.DEAD_KERNEL,
    "UnresponsiveKernelError": Failure.UNRESPONSIVE,
    "SchemaTooOldError": Failure.OLD_METADATA,
    "ValidationError": Failure.BAD_METADATA,
}
REASONS = {
    Failure.DEAD_KERNEL: "the kernel died before the first cell ran (a crash or out of memory); "
                         "no cell could be scored",
    Failure.UNRESPONSIVE: "the kernel stopped responding and could not be interrupted",
    Failure.OLD_METADATA: "the notebook's nbgrader metadata is from an older nbgrader",
    Failure.BAD_METADATA: "the notebook's nbgrader metadata is corrupted",
    Failure.CRASHED: "the grading process crashed",
}
MAX_NOTEBOOK_BYTES = 64 << 20  # a submission larger than this is not read (its outputs are cleared anyway)
_LOG_KEPT = 20_000  # characters of nbgrader's log kept in a failed record
GRADEBOOKS = "gradebooks"  # under a job's work_dir: each job's gradebook, in a folder of its own


def default_jobs() -> int:
    """One job per available core."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # macOS, Windows
        return max(1, os.cpu_count() or 1)


@contextmanager
def scratch_folder(parent: Path, prefix: str = "tmp") -> Iterator[str]:
    """A temporary folder under `parent`, removed on exit without ever failing the job.

    Seen at load 8 (tests/batch/test_session.py plays it back): removing a job's
    gradebook folder raised `OSError: [Errno 39] Directory not empty` because a file appeared
    in it while it was removed (SQLite's journal of a connection that closes late), and the
    mutant it graded was reported as "could not be graded". Removal is retried; what is still
    left goes with the session's own folder (session.py), removed when the session ends.
    """
    path = tempfile.mkdtemp(prefix=prefix, dir=parent)
    try:
        yield path
    finally:
        for attempt in range(4):
            try:
                shutil.rmtree(path)
                break
            except FileNotFoundError:
                break
            except OSError:
                time.sleep(0.1 * (attempt + 1))


@dataclass(frozen=True)
class GradeJob:
    """Everything one grading run needs. `notebook` may have any name (Colab's `Copy of ...`)."""

    student_id: str
    assignment: str
    notebook: Path
    template_dir: Path  # a Template's folder (autograder/engine/template.py)
    work_dir: Path  # where the job's temporary course folder goes
    label: str = "submission"  # check: solution, release, mutant:<name>
    timeout: int | None = None  # seconds per cell; None: nbgrader_config.py's
    restore_missing_cells: bool = True
    feedback_dir: Path | None = None  # write <assignment>.html here
    autograded_dir: Path | None = None  # keep the executed notebook here (instructors only)
    warnings: tuple[str, ...] = ()  # found while collecting the submission; carried to the result
    kernel_server: str | None = None  # socket of a warm kernel server; None: ordinary kernels
    hide: tuple[str, ...] = ()  # paths the kernel must not read (autograder/engine/sandbox.py)
    verify: bool = True  # also run the trusted probes (autograder/engine/verify.py) where they exist
    verify_key: str = ""  # secret mixed into the probes' seed; empty: a fresh one per run
    course_root: Path | None = None  # the course whose grading/ holds the probes; None: default_root()

    @property
    def feedback_file(self) -> Path | None:
        """The feedback page the job writes (feedback_dir/<assignment>.html), if it writes one."""
        return None if self.feedback_dir is None else Path(self.feedback_dir) / f"{self.assignment}.html"

    @property
    def kept_notebook(self) -> Path | None:
        """The executed notebook the job keeps (autograded_dir/<assignment>.ipynb), if it keeps one."""
        return None if self.autograded_dir is None else Path(self.autograded_dir) / f"{self.assignment}.ipynb"


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
    cells: dict[str, dict] = field(default_factory=dict)  # test grade_id -> score, max_score, error
    seconds: float = 0.0
    log: str = ""  # nbgrader's log, when it failed
    verification: dict[str, str] = field(default_factory=dict)  # exercise -> "passed" or why not
    failure: str = Failure.NONE  # why status is "error" (a Failure value)
    # Test cells that nbgrader's own rule (its validator, a plain autograde) fails for what they wrote
    # to stderr; grading ignores that output (autograder/engine/quiet_stderr.py), `check` does not.
    stderr_cells: list[str] = field(default_factory=list)

    def to_dict(self) -> dict:
        return asdict(self)


# -- one job ------------------------------------------------------------------------------------

def grade_submission(job: GradeJob) -> GradeResult:
    """Autograde one notebook in a course folder of its own; never raises."""
    start = time.perf_counter()
    result = GradeResult(job.student_id, job.assignment, job.label, "error", 0.0, 0.0,
                         warnings=list(job.warnings))
    try:
        source_path = Path(job.template_dir) / "source" / job.assignment / f"{job.assignment}.ipynb"
        source_nb = read_notebook(source_path)
        points = exercises.of_notebook(source_path).test_points()
        result.max_score = sum(points.values())
        result.cells = {gid: {"score": 0.0, "max_score": p, "error": ""} for gid, p in points.items()}
        try:
            size = Path(job.notebook).stat().st_size
            if size > MAX_NOTEBOOK_BYTES:
                raise ValueError(f"{size / 2 ** 20:.0f} MiB; the limit is {MAX_NOTEBOOK_BYTES >> 20} MiB")
            nb = read_notebook(job.notebook)
        except Exception as error:  # malformed JSON, not a notebook, unreadable file, too large
            result.failure = Failure.UNREADABLE
            result.reason = (f"{Path(job.notebook).name} is not a readable notebook "
                             f"({type(error).__name__}: {str(error).splitlines()[0][:200]})")
            return result
        # nbgrader repairs the notebook it grades (DropDuplicateCells, RestoreMissingCells in
        # nbgrader_config.py); the same repair here, on a copy, names it for the result and
        # gives the trusted run the cells nbgrader grades.
        repaired = copy.deepcopy(nb)
        duplicates = drop_duplicate_cells(repaired, source_nb)
        if duplicates:
            result.warnings.append("duplicated cells dropped (the first copy is graded): "
                                   + ", ".join(duplicates))
        if job.restore_missing_cells:
            restored = restore_missing_cells(repaired, source_nb)
            if restored:
                result.warnings.append("deleted cells restored from the source: "
                                       + ", ".join(restored))
        with warnings.catch_warnings():
            # nbgrader's gradebook trips SQLAlchemy's autoflush warning on every submission.
            warnings.filterwarnings("ignore", category=SAWarning)
            _autograde(job, nb, repaired, source_nb, result)
    except Exception as error:  # a bug here must not stop a batch either
        result.status, result.failure = "error", Failure.INTERNAL
        result.reason = f"internal error while grading: {type(error).__name__}: {error}"
    finally:
        result.seconds = round(time.perf_counter() - start, 2)
    return result


def _autograde(job: GradeJob, nb: NotebookNode, repaired: NotebookNode, source_nb: NotebookNode,
               result: GradeResult) -> None:
    """nbgrader autograde (and generate_feedback) in a temporary course; fills `result`.

    nb: the submission as handed in (nbgrader's pipeline repairs it); repaired: the same after
    the repair, for the trusted run."""
    from nbgrader.converters import Autograde
    from nbgrader.coursedir import CourseDirectory

    ensure_tools_on_path()
    os.environ.setdefault("MPLBACKEND", "Agg")
    assignment, student = job.assignment, safe_id(job.student_id)
    Path(job.work_dir).mkdir(parents=True, exist_ok=True)
    # The gradebook lives apart from the folder the kernel works in (GRADEBOOKS is hidden from
    # kernels by the sandbox): a student's cell must not find it, let alone write to it.
    (Path(job.work_dir) / GRADEBOOKS).mkdir(parents=True, exist_ok=True)
    with scratch_folder(job.work_dir, prefix=f"job-{assignment}-") as tmp, \
            scratch_folder(Path(job.work_dir) / GRADEBOOKS) as private, \
            nbgrader_log("autograde") as (logger, log):
        course, gradebook = Path(tmp), Path(private) / "gradebook.db"
        course_from_template(course, job.template_dir, assignment, gradebook)
        write_notebook(nb, course / "submitted" / student / assignment / f"{assignment}.ipynb")
        config = load_config(course, db_path=gradebook, timeout=job.timeout, kernel_server=job.kernel_server,
                             restore_missing_cells=job.restore_missing_cells, hide=job.hide)
        stderr_record = Path(private) / "stderr.json"  # out of every kernel's sight, as the gradebook
        config.QuietStderr.record = str(stderr_record)
        trusted = _probes_after_the_notebook(job, repaired, source_nb, config, course, student)
        coursedir = CourseDirectory(config=config, log=logger)
        coursedir.assignment_id, coursedir.student_id = assignment, student
        try:
            Autograde(coursedir=coursedir, config=config, log=logger).start()
        except Exception as error:
            result.log = log.getvalue()[-_LOG_KEPT:]
            result.failure, result.reason = _failure(result.log, error)
            return
        autograded = course / "autograded" / student / assignment / f"{assignment}.ipynb"
        unscored = _read_scores(config, assignment, student, autograded, result)
        executed = read_notebook(autograded)
        result.warnings += kernel_deaths(executed) + budget_overruns(executed)
        if stderr_record.is_file():
            result.stderr_cells = json.loads(stderr_record.read_text())
        if unscored and job.restore_missing_cells:
            result.failure = Failure.UNSCORED
            result.reason = "no automatic score for " + ", ".join(unscored)
            result.log = log.getvalue()[-_LOG_KEPT:]
            return
        result.status, result.failure = "graded", Failure.NONE
        if trusted is not None:
            _verify(job, repaired, source_nb, config, course, autograded, result, logger, trusted)
        if job.feedback_file is not None:  # made in a child with limits: the notebook is the student's
            make_page(job.template_dir, assignment, job.student_id, autograded,
                      {gid: cell["score"] for gid, cell in result.cells.items()}, job.feedback_file,
                      Path(job.template_dir) / "source" / assignment / f"{assignment}.ipynb")
        if job.kept_notebook is not None:
            _copy(autograded, job.kept_notebook)


@dataclass
class _Trusted:
    """The trusted probes of one job, run after nbgrader's cells in its kernel (see _verify)."""

    plan: object  # verify.Plan
    conversation: object  # probes.session.Conversation: the executor's feed, what came back
    report: dict  # what the executor says of the run (execute.GradingExecute.report)
    executor: type  # the pipeline's own executor class, for a second run


def _probes_after_the_notebook(job: GradeJob, repaired: NotebookNode, source_nb: NotebookNode, config,
                               course: Path, student: str) -> _Trusted | None:
    """Make nbgrader's kernel run the trusted probes after the notebook's last cell: the job's own
    executor class, its epilogue the caller's cells, its feed the probe's conversation. None when the
    job has no trusted run (verify off, or no probe)."""
    if not job.verify:
        return None
    from nbgrader.converters import Autograde
    from nbgrader.preprocessors import Execute

    from autograder.engine import verify as trusted

    key = job.verify_key or secrets.token_hex(16)
    plan = trusted.prepare(job.assignment, job.student_id, repaired, source_nb, key=key, root=job.course_root)
    if plan is None:
        return None
    pipeline = list(config.Autograde.get("autograde_preprocessors") or Autograde.class_traits()[
        "autograde_preprocessors"].default())
    index = next(i for i, step in enumerate(pipeline) if isinstance(step, type) and issubclass(step, Execute))
    report, executor, conversation = {}, pipeline[index], plan.conversation()
    # Not in `config`: nbclient loads the config again when it starts, over what was set by hand.
    pipeline[index] = type(executor.__name__, (executor,), {
        "epilogue": tuple(plan.kernel_cells()), "report": report, "feed": staticmethod(conversation)})
    config.Autograde.autograde_preprocessors = pipeline
    return _Trusted(plan, conversation, report, executor)


def _verify(job: GradeJob, nb: NotebookNode, source_nb: NotebookNode, config, course: Path,
            autograded: Path, result: GradeResult, logger, probes: _Trusted) -> None:
    """The trusted run (autograder/engine/verify.py): withdraw points it does not confirm, say why.

    Its probes ran after the notebook's own cells in nbgrader's kernel. Where those cells did not
    all run (the kernel died, the notebook's budget ran out), a fresh kernel runs the student's code
    and the probes again, as verify.verify does (a death there runs the cells before it, alone)."""
    from autograder.engine import verify as trusted

    outputs = probes.conversation.finish()
    if probes.report.get("notebook_ran") and probes.report.get("epilogue_ran") is not None:
        verification = trusted.conclude(probes.plan, outputs)
    else:
        def execute(notebook: NotebookNode, folder: Path, feed) -> None:
            running = probes.executor(config=config, log=logger)
            running.feed = feed  # the probe's conversation, and its served data (06's training batches)
            running.preprocess(notebook, {"metadata": {"path": str(folder)}})

        verification = trusted.verify(job.assignment, job.student_id, nb, source_nb, course / "verify", execute,
                                      plan=probes.plan)
    result.verification = {name: v.message or "passed" for name, v in verification.verdicts.items()}
    changed = trusted.apply(verification, result.cells)
    result.score = round(sum(c["score"] for c in result.cells.values()), 6)
    if changed:
        result.warnings.append("points withdrawn, the exercise failed on unseen inputs: " + ", ".join(changed))
    for note in verification.findings:
        result.warnings.append(f"code no answer needs: {note}")
    if changed:  # the feedback reads its scores from the gradebook
        withdraw_points(config.CourseDirectory.db_url, config.CourseDirectory.course_id,
                        job.assignment, safe_id(job.student_id), changed)
    executed = read_notebook(autograded)
    executed.cells.insert(0, nbformat.v4.new_markdown_cell(trusted.summary_markdown(verification)))
    write_notebook(executed, autograded)


def withdraw_points(db_url: str, course_id: str, assignment: str, student: str,
                    cells: list[str]) -> None:
    """Set the automatic score of these test cells to 0 in the gradebook.

    The trusted run is part of the automatic grading, so its verdict is an auto_score: a
    manual_score would show in nbgrader's formgrader as a person's override. Why the points went
    is in the result's warnings and the feedback's "Checked outside your notebook" table.
    """
    from nbgrader.api import Gradebook

    with Gradebook(db_url, course_id) as gb:
        for gid in cells:
            gb.find_grade(gid, assignment, assignment, student).auto_score = 0.0
        gb.db.commit()


def _read_scores(config, assignment: str, student: str, autograded: Path,
                 result: GradeResult) -> list[str]:
    """Fill result.cells and result.score from the gradebook; returns the cells left unscored."""
    from nbgrader.api import Gradebook

    with Gradebook(config.CourseDirectory.db_url, config.CourseDirectory.course_id) as gb:
        submission = gb.find_submission_notebook(assignment, assignment, student)
        # auto_score only: nbgrader computed it from the executed notebook; a manual score would
        # have come from somewhere else, and nobody grades by hand here.
        scores = {g.name: (g.auto_score, g.auto_score) for g in submission.grades}
        known = {cell.name for cell in submission.notebook.source_cells}  # the source's grade_ids
    errors, timed_out = _cell_errors(read_notebook(autograded), known)
    unscored = []
    for gid, cell in result.cells.items():
        score, auto = scores.get(gid, (None, None))
        cell["score"] = float(score) if score is not None else 0.0
        cell["error"] = errors.get(gid, "")
        if auto is None:
            unscored.append(gid)
    result.score = round(sum(c["score"] for c in result.cells.values()), 6)
    if timed_out:
        result.warnings.append(f"cells stopped after the {config.Execute.timeout} s limit: "
                               + ", ".join(timed_out))
    return unscored


def _cell_errors(nb: NotebookNode, known: set[str]) -> tuple[dict[str, str], list[str]]:
    """(grade_id -> 'Ename: message' of the first error of each graded or solution cell,
    the cells stopped by the timeout, named by grade_id or position). Only the `known` grade_ids,
    the source's, name a cell: any other is the student's text, never a key or a warning."""
    errors, timed_out = {}, []
    for index, cell in enumerate(nb.cells):
        if cell.cell_type != "code":
            continue
        gid = grade_id(cell) if grade_id(cell) in known else None
        raised = [o for o in cell.get("outputs", []) if o.get("output_type") == "error"]
        if any(o.get("ename") == "CellTimeoutError" for o in raised):
            timed_out.append(gid or f"cell {index + 1}")
        if gid and raised:
            message = str(raised[0].get("evalue", "")).strip().splitlines()
            errors[gid] = f"{raised[0].get('ename', 'Error')}: {message[0] if message else ''}"[:300]
    return errors, timed_out


def _failure(log_text: str, error: Exception) -> tuple[Failure, str]:
    """(the kind of failure, its reason) from nbgrader's log and the exception it raised."""
    for name, failure in _NBGRADER_ERRORS.items():
        if name in log_text or name in repr(error):
            return failure, REASONS[failure]
    errors = [line[len("[ERROR] "):] for line in log_text.splitlines() if line.startswith("[ERROR]")]
    detail = next((e for e in errors if "Traceback" not in e), "") or str(error)
    return Failure.NBGRADER, f"nbgrader could not grade the notebook: {detail[:300]}"


def safe_id(text: str) -> str:
    """A student id that nbgrader's globs and regular expressions cannot trip on."""
    return re.sub(r"[^A-Za-z0-9_-]", "_", text) or "student"


def _copy(src: Path, dst: Path) -> None:
    dst.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(src, dst)
