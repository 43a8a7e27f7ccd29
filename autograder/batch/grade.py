"""`python -m autograder grade SUBMITTED [ASSIGNMENT...] [--assignment NAME]... [--out DIR] [--jobs N]`.

SUBMITTED is nbgrader's layout, `SUBMITTED/<student>/<assignment>/<assignment>.ipynb`. The
assignments graded are those named (ASSIGNMENT, --assignment), else those SUBMITTED holds for at
least one student (what `collect` placed): an assignment not collected yet gets no row. Every
student gets one row per assignment graded in DIR/grades.csv, whatever went wrong; the executed
notebook goes to DIR/autograded/<student>/<assignment>/ (for instructors, and for the feedback).
The feedback HTML is made when asked for: `python -m autograder feedback DIR` makes the pages
that are missing (autograder/engine/feedback_html.py, `render`) and packs them; with --feedback,
grade makes each page while grading instead, into DIR/feedback/<student>/<assignment>/.

What students actually hand in, and what happens:
  the right layout                         graded
  a renamed notebook (`Copy of X.ipynb`),  graded as that assignment, with a warning
    alone in its folder or loose in the student's folder
  an assignment folder missing or empty    row with 0, status "missing"
  an empty student folder                  a "missing" row for every assignment graded
  a folder that is no assignment           row with status "unknown_assignment"
  malformed JSON                           row with 0, status "error", the parser's message
  deleted test cells                       put back from the source, graded, with a warning
  a copy of an earlier published version   graded by that version (nbgrader's checksums tell),
                                           with a warning (autograder/batch/received.py)
  a kernel that dies (`os._exit`)          the points before it kept, in both runs; the batch goes on
  an infinite loop                         that cell stops at the per-cell timeout and scores 0

A batch resumes: each result is journaled in DIR/.journal/ as it arrives (autograder/batch/journal.py)
with a fingerprint of the notebook, the source and the settings; running the same command again
grades only what has no matching record (--regrade: everything). Ctrl-C stops the workers and
their kernels, says how far it got and exits 130. grades.csv, grades.json and report.json are
written whole or not at all (temporary file + rename). report.json: rows graded and failed (with
reasons), reused, wall time, submissions per minute, the slowest five, warnings. --backend dask
hands the jobs to a Dask cluster instead of local processes (autograder/batch/backends.py).
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from autograder.batch.backends import LocalPool, add_backend_options, make_backend
from autograder.batch.journal import Journal, fingerprint, grading_settings
from autograder.batch.received import graded_by, on_the_course_scale
from autograder.batch.session import BatchInterrupted, GradingSession
from autograder.course.atomic import atomic_write
from autograder.course.layout import Course, CourseError, add_assignment_options, selected
from autograder.course.safe_text import csv_text, safe_line, safe_lines
from autograder.course.submitted import Submission, collect, handed_in
from autograder.engine.job import GradeJob, GradeResult, default_jobs
from autograder.engine.nbgrader_setup import load_config
from autograder.engine.privsep import Refusal
from autograder.engine.template import GenerationError, build_template

CSV_COLUMNS = ("student_id", "assignment", "score", "max_score", "status", "reason", "warnings",
               "submitted_at", "due_at")  # timestamp.txt, due.txt (autograder/course/lateness.py), UTC
def _row(sub: Submission, result: GradeResult | None, max_score: float | None) -> dict:
    """One line of grades.csv; max_score is the assignment's (None: not an assignment)."""
    done = result if result is not None else sub
    return {"student_id": sub.student_id, "assignment": sub.assignment,
            "score": f"{result.score:g}" if result is not None else "0",
            "max_score": "" if max_score is None else f"{max_score:g}",
            "status": done.status, "reason": done.reason, "warnings": "; ".join(done.warnings),
            "submitted_at": sub.submitted_at, "due_at": sub.due_at}


@dataclass
class Batch:
    """What one `grade` run produced: the CSV rows, the JSON records and the report."""

    rows: list[dict]
    records: list[dict]
    report: dict


def grade(course: Course, submitted: Path, out: Path, requested: list[str] | None = None,
          n_jobs: int | None = None, timeout: int | None = None, progress=None,
          warm_kernels: bool | None = None, backend=None, regrade: bool = False,
          feedback: bool = False) -> list[dict]:
    """Grade every submission under `submitted`; the rows of grades.csv (see grade_batch)."""
    return grade_batch(course, submitted, out, requested, n_jobs, timeout, progress,
                       warm_kernels, backend, regrade, feedback).rows


def grade_batch(course: Course, submitted: Path, out: Path, requested: list[str] | None = None,
                n_jobs: int | None = None, timeout: int | None = None, progress=None,
                warm_kernels: bool | None = None, backend=None, regrade: bool = False,
                feedback: bool = False) -> Batch:
    """Grade every submission under `submitted`; writes grades.csv, grades.json, report.json
    and autograded/ under `out` (and feedback/, with `feedback`: the HTML made while grading).

    Each result is journaled as it arrives (autograder/batch/journal.py); a submission whose journal
    record matches it is not graded again unless `regrade`. warm_kernels: fork kernels from a
    KernelServer (default: yes, unless AUTOGRADER_WARM_KERNELS=0), on this machine's workers
    only. backend: autograder/batch/backends.py (default: local processes). Ctrl-C raises
    BatchInterrupted, counting the reused results as done, and leaves grades.csv as it was.
    """
    start = time.perf_counter()
    backend = backend if backend is not None else LocalPool()
    submitted, out = Path(submitted).resolve(), Path(out).resolve()
    # The assignments named, else those handed in: never a "missing" row (a 0 to export) for an
    # assignment that was not collected yet.
    assignments = course.select(requested) if requested else handed_in(submitted, course.assignments())
    if not assignments:
        raise CourseError(f"{submitted} holds no folder of any assignment of this course "
                          f"({', '.join(course.assignments()) or 'none'}); collect them first, "
                          "or name the assignments to grade")
    subs = collect(submitted, assignments, course.assignments())
    journal = Journal(out)
    # No kernel reads the answers, the submissions, the output, or this run's folder (the
    # template, the gradebooks, other students' jobs) but for its own job (sandbox.py).
    with GradingSession(course, "grade", n_jobs, warm_kernels, backend, hidden=(submitted, out),
                        warn=None if progress is not None else lambda line: None) as session:
        tmp, hide = session.dir, session.hide
        template = build_template(course.source_dir, assignments, tmp / "template")
        todo = [s for s in subs if s.notebook is not None]
        # Each by the version of its assignment the student received (autograder/batch/received.py).
        by = graded_by(course, todo, template, tmp / "versions")
        key = journal.key()
        jobs = [GradeJob(student_id=s.student_id, assignment=s.assignment, notebook=s.notebook,
                         # under tmp: what an interrupted job leaves goes with it
                         template_dir=by[s.student_id, s.assignment][0], work_dir=tmp / "jobs",
                         timeout=timeout, warnings=tuple(s.warnings) + by[s.student_id, s.assignment][1],
                         hide=hide, verify_key=key,
                         course_root=course.root,
                         feedback_dir=out / "feedback" / s.student_id / s.assignment if feedback else None,
                         autograded_dir=out / "autograded" / s.student_id / s.assignment)
                for s in todo]
        settings = grading_settings(course.root, timeout or load_config(template.dir).Execute.timeout)
        inputs = [fingerprint(j, Path(j.template_dir) / "source" / j.assignment / f"{j.assignment}.ipynb",
                              settings) for j in jobs]
        results: list[GradeResult | None] = [
            None if regrade else journal.reusable(j, i) for j, i in zip(jobs, inputs)]
        pending = [k for k, r in enumerate(results) if r is None]
        reused = len(jobs) - len(pending)
        stale = {(s.student_id, s.assignment) for s in subs} - {
            (jobs[k].student_id, jobs[k].assignment) for k, r in enumerate(results) if r}
        for student_id, assignment in stale:  # no stale feedback from an earlier run
            for kind in ("feedback", "autograded"):
                shutil.rmtree(out / kind / student_id / assignment, ignore_errors=True)
        for sub in subs:
            if sub.notebook is None:
                journal.remove(sub.student_id, sub.assignment)
        if reused and progress is not None:
            print(safe_line(f"  reused {reused} of {len(jobs)} result(s) from {journal.dir} "
                            "(--regrade grades them again)"), file=sys.stderr, flush=True)

        def arrived(result: GradeResult) -> None:
            k = index[(result.student_id, result.assignment)]
            journal.write(result, inputs[k])
            if progress is not None:
                progress(result)

        index = {(j.student_id, j.assignment): k for k, j in enumerate(jobs)}
        try:
            graded = session.run([jobs[k] for k in pending], on_result=arrived)
        except BatchInterrupted as stop:
            raise BatchInterrupted(reused + stop.done, len(jobs)) from None
        for k, result in zip(pending, graded):
            results[k] = result
    by_sub = {(j.student_id, j.assignment): (r, i) for j, r, i in zip(jobs, results, inputs)}
    rows, records, warnings = [], [], 0
    for sub in subs:
        result = _journaled(journal, *by_sub.get((sub.student_id, sub.assignment), (None, None)))
        info = template.assignments.get(sub.assignment)
        if result is not None and info is not None:  # an earlier version's points (batch/received.py)
            result = on_the_course_scale(result, info.max_score)
        rows.append(_row(sub, result, info.max_score if info else None))
        records.append(result.to_dict() if result else dict(rows[-1], cells={}))
        warnings += len(result.warnings if result else sub.warnings)
    wall = time.perf_counter() - start
    fresh = [results[k] for k in pending]
    report = make_report(rows, fresh, reused, warnings, wall, n_jobs, backend.describe())
    _write_csv(out / "grades.csv", rows)
    atomic_write(out / "grades.json", json.dumps(records, indent=2) + "\n")
    atomic_write(out / "report.json", json.dumps(report, indent=2) + "\n")
    return Batch(rows, records, report)


def _journaled(journal: Journal, result: GradeResult | None, inputs: dict | None
               ) -> GradeResult | None:
    """The journal's copy of a result (what grades.csv is written from), else the result
    (a crash is not journaled; an older record of other inputs does not count)."""
    if result is None:
        return None
    record = journal.read(result.student_id, result.assignment)
    if record is None or record.get("inputs", {}).get("digest") != inputs["digest"]:
        return result
    return GradeResult(**record["result"])


def _write_csv(path: Path, rows: list[dict]) -> None:
    """grades.csv, every cell made safe (autograder/course/safe_text.py): a reason, a warning or a
    folder's name holds no control character and starts no spreadsheet formula."""
    atomic_write(path, csv_text(CSV_COLUMNS, [[row[c] for c in CSV_COLUMNS] for row in rows]))


def make_report(rows: list[dict], fresh: list[GradeResult], reused: int, warnings: int,
                wall: float, n_jobs: int | None, backend: str) -> dict:
    """The end-of-batch summary (report.json): counts, failures, speed, slowest submissions."""
    failed = [{"student_id": r["student_id"], "assignment": r["assignment"],
               "status": r["status"], "reason": r["reason"]} for r in rows if r["status"] != "graded"]
    slowest = sorted(fresh, key=lambda r: r.seconds, reverse=True)[:5]
    return {
        "rows": len(rows),
        "graded": sum(r["status"] == "graded" for r in rows),
        "failed": failed,
        "reused": reused,
        "graded_now": len(fresh),
        "wall_seconds": round(wall, 2),
        # Over the submissions graded by this run (reused ones cost nothing).
        "submissions_per_minute": round(len(fresh) * 60 / wall, 2) if fresh and wall > 0 else None,
        "slowest": [{"student_id": r.student_id, "assignment": r.assignment, "seconds": r.seconds}
                    for r in slowest],
        "warnings": warnings,
        "jobs": n_jobs or default_jobs(),
        "backend": backend,
    }


def format_report(report: dict) -> str:
    """The report as printed at the end of `grade`, each line made safe for a terminal."""
    speed = report["submissions_per_minute"]
    lines = [f"{report['graded']} of {report['rows']} rows graded, {len(report['failed'])} failed, "
             f"{report['reused']} reused from the journal; {report['graded_now']} graded in "
             f"{report['wall_seconds']:.1f} s"
             + (f" ({speed:.1f} submissions/min, {report['jobs']} jobs, {report['backend']})"
                if speed else "")
             + f"; {report['warnings']} warning(s)"]
    if report["slowest"]:
        lines.append("slowest: " + ", ".join(f"{s['student_id']}/{s['assignment']} {s['seconds']:.1f} s"
                                             for s in report["slowest"]))
    return "\n".join(map(safe_line, lines))


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("submitted", type=Path, metavar="SUBMITTED",
                        help="folder laid out as SUBMITTED/<student>/<assignment>/<assignment>.ipynb")
    parser.add_argument("--out", type=Path, default=None,
                        help="output folder for grades.csv and feedback/ (default: build/grades)")
    parser.add_argument("--jobs", "-j", type=int, default=None,
                        help=f"submissions graded in parallel (default: {default_jobs()}, the cores)")
    add_assignment_options(parser, default="the assignments SUBMITTED holds for at least one "
                                           "student, what collect placed")
    parser.add_argument("--timeout", type=int, default=None,
                        help="seconds per cell (default: nbgrader_config.py's, 60)")
    parser.add_argument("--cold-kernels", action="store_true",
                        help="start every kernel from scratch instead of forking it from a warm "
                             "kernel server")
    add_backend_options(parser)
    parser.add_argument("--feedback", action="store_true",
                        help="make each submission's feedback HTML while grading (into "
                             "OUT/feedback/); without it, `python -m autograder feedback OUT` "
                             "makes the pages when they are asked for")
    parser.add_argument("--regrade", action="store_true",
                        help="grade every submission again, even those whose result in "
                             "OUT/.journal/ still matches the notebook, the source and the settings")


def run(args: argparse.Namespace, course: Course) -> int:
    if not args.submitted.is_dir():
        print(safe_line(f"grade: {args.submitted} is not a folder of submissions "
                        "(expected SUBMITTED/<student>/<assignment>/<assignment>.ipynb)"))
        return 2
    if not course.assignments():
        print(safe_line(f"grade: no assignment in {course.source_dir}"))
        return 2
    out = args.out or course.build_dir / "grades"

    def progress(result: GradeResult) -> None:
        # Names, reasons and warnings come from the submission: one safe line each.
        outcome = (f"{result.score:g}/{result.max_score:g}" if result.status == "graded"
                   else f"{result.status}: {result.reason}")
        print(safe_line(f"  {result.student_id}/{result.assignment}: {outcome} ({result.seconds:.1f} s)"),
              file=sys.stderr, flush=True)
        for warning in result.warnings:
            print(safe_line(f"    warning: {warning}"), file=sys.stderr, flush=True)

    try:
        named = [*(args.assignments or []), *(args.assignment or [])]
        batch = grade_batch(course, args.submitted, out, selected(args, course) if named else None,
                            args.jobs, args.timeout,
                            progress, warm_kernels=False if args.cold_kernels else None,
                            backend=make_backend(args.backend, args.scheduler),
                            regrade=args.regrade, feedback=args.feedback)
    except (GenerationError, Refusal) as error:
        print(safe_lines(f"grade stopped: {error}"))
        return 2
    except BatchInterrupted as stop:
        print(f"interrupted: {stop.done} of {stop.total} graded; "
              "run the same command again to resume", flush=True)
        return 130
    except KeyboardInterrupt:  # before or after the batch itself: nothing half-written either
        print("interrupted; run the same command again to resume", flush=True)
        return 130
    rows = batch.rows
    problems = [r for r in rows if r["status"] != "graded"]
    for row in problems:
        print(safe_line(f"  {row['student_id']}/{row['assignment']}: {row['status']}: {row['reason']}"))
    students = len({r["student_id"] for r in rows})
    print(format_report(batch.report))
    print(safe_line(f"Graded {len(rows) - len(problems)} of {len(rows)} rows for {students} student(s); "
                    f"{len(problems)} need attention. Grades: {out / 'grades.csv'}; report: {out / 'report.json'}; "
                    + (f"feedback: {out / 'feedback'}" if args.feedback
                       else f"feedback, when you want it: python -m autograder feedback {out}")))
    return 0
