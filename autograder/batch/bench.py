"""`python -m autograder bench SUBMITTED [--jobs N]`: our `grade` against plain nbgrader.

Both grade the same batch in one run and the same environment:
  plain nbgrader   `nbgrader autograde ASSIGNMENT` for each assignment, in one fresh course
                   folder holding a copy of source/, the batch under submitted/ and a
                   nbgrader_config.py that loads ours (autograder/nbgrader_config.py) and only
                   moves its folders there. nbgrader grades one notebook after another, each
                   on a cold kernel. `nbgrader generate_assignment` runs first, untimed.
  ours             `python -m autograder grade SUBMITTED --jobs N --regrade` into a fresh
                   output folder, timed whole (its own generation included; like plain
                   `nbgrader autograde`, it makes no feedback HTML: `feedback` makes that).
Printed: submissions per minute of each, their ratio and whether the scores agree; the same
goes to OUT/bench.json (default OUT: build/bench).
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import platform
import shutil
import subprocess
import sys
import time
from pathlib import Path

from autograder.course.layout import Course
from autograder.course.submitted import collect
from autograder.engine.job import default_jobs
from autograder.engine.nbgrader_setup import CONFIG_FILE

_PLAIN_CONFIG = '''\
# Plain nbgrader on a copy of the batch: the course's settings, this folder's locations.
c = get_config()  # noqa: F821
load_subconfig({config!r})  # noqa: F821
c.CourseDirectory.root = {root!r}
c.CourseDirectory.db_url = {db_url!r}
c.CourseDirectory.source_directory = "source"
c.CourseDirectory.release_directory = "release"
c.CourseDirectory.submitted_directory = "submitted"
c.CourseDirectory.autograded_directory = "autograded"
c.CourseDirectory.feedback_directory = "feedback"
'''


def _env() -> dict:
    """This environment with its bin/ first on PATH (nbgrader runs `alembic` from there)."""
    bin_dir = str(Path(sys.executable).parent)
    return {**os.environ, "PATH": os.pathsep.join([bin_dir, os.environ.get("PATH", "")])}


def _run(command: list[str], cwd: Path, log: Path) -> float:
    """Run `command`, its output into `log`; seconds it took. Raises when it fails."""
    start = time.perf_counter()
    with open(log, "a", encoding="utf-8") as f:
        f.write(f"$ {' '.join(command)}\n")
        f.flush()
        done = subprocess.run(command, cwd=cwd, env=_env(), stdout=f, stderr=subprocess.STDOUT,
                              stdin=subprocess.DEVNULL)
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(command[:4])} ... failed (exit {done.returncode}); see {log}")
    return seconds


def plain_nbgrader(course: Course, batch: dict[tuple[str, str], Path], folder: Path
                   ) -> tuple[float, dict[tuple[str, str], float]]:
    """Grade `batch` ((student, assignment) -> notebook) with nbgrader's command line.

    Returns the seconds `nbgrader autograde` took, all assignments together, and the scores
    from its gradebook.
    """
    from nbgrader.api import Gradebook

    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    assignments = sorted({a for _, a in batch})
    for assignment in assignments:
        shutil.copytree(course.source_dir / assignment, folder / "source" / assignment)
    for (student, assignment), notebook in batch.items():
        target = folder / "submitted" / student / assignment / f"{assignment}.ipynb"
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(notebook, target)
    db_url = f"sqlite:///{(folder / 'gradebook.db').resolve()}"
    (folder / "nbgrader_config.py").write_text(_PLAIN_CONFIG.format(
        config=str(CONFIG_FILE), root=str(folder.resolve()), db_url=db_url))
    nbgrader = [sys.executable, "-m", "nbgrader"]
    log = folder / "nbgrader.log"
    for assignment in assignments:
        _run([*nbgrader, "generate_assignment", assignment, "--force"], folder, log)
    seconds = sum(_run([*nbgrader, "autograde", assignment], folder, log)
                  for assignment in assignments)
    scores = {}
    with Gradebook(db_url) as gb:
        for student, assignment in batch:
            try:
                scores[student, assignment] = float(gb.find_submission(assignment, student).score)
            except Exception:  # nbgrader kept no submission: it failed to grade it
                scores[student, assignment] = None
    return seconds, scores


def ours(course: Course, submitted: Path, assignments: list[str], folder: Path, n_jobs: int
         ) -> tuple[float, dict[tuple[str, str], float]]:
    """Grade the batch with `python -m autograder grade`; seconds of the command, scores."""
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    command = [sys.executable, "-m", "autograder", "grade", str(submitted), "--root",
               str(course.root), "--out", str(folder / "grades"), "--jobs", str(n_jobs), "--regrade"]
    for assignment in assignments:
        command += ["--assignment", assignment]
    seconds = _run(command, course.root, folder / "grade.log")
    with open(folder / "grades" / "grades.csv", newline="", encoding="utf-8") as f:
        scores = {(r["student_id"], r["assignment"]): float(r["score"])
                  for r in csv.DictReader(f) if r["status"] == "graded"}
    return seconds, scores


def bench(course: Course, submitted: Path, out: Path, n_jobs: int | None = None) -> dict:
    """Time both on the batch under `submitted`; returns (and writes to out/bench.json) the result."""
    n_jobs = n_jobs or default_jobs()
    submitted, out = Path(submitted).resolve(), Path(out).resolve()
    found = [s for s in collect(submitted, course.assignments()) if s.notebook is not None]
    if not found:
        raise ValueError(f"no notebook to grade under {submitted}")
    batch = {(s.student_id, s.assignment): s.notebook for s in found}
    assignments = sorted({a for _, a in batch})
    load_before = os.getloadavg()[0] if hasattr(os, "getloadavg") else None
    # Ours first: whatever the first run warms up (the page cache) then helps nbgrader.
    our_seconds, our_scores = ours(course, submitted, assignments, out / "ours", n_jobs)
    plain_seconds, plain_scores = plain_nbgrader(course, batch, out / "nbgrader")
    n = len(batch)
    differences = [{"student_id": s, "assignment": a, "nbgrader": plain_scores.get((s, a)),
                    "ours": our_scores.get((s, a))}
                   for s, a in sorted(batch) if plain_scores.get((s, a)) != our_scores.get((s, a))]
    report = {
        "submissions": n,
        "assignments": assignments,
        "jobs": n_jobs,
        "cores": default_jobs(),
        "nbgrader": {"seconds": round(plain_seconds, 2),
                     "submissions_per_minute": round(n * 60 / plain_seconds, 2),
                     "command": "nbgrader autograde ASSIGNMENT (each assignment, sequential)"},
        "ours": {"seconds": round(our_seconds, 2),
                 "submissions_per_minute": round(n * 60 / our_seconds, 2),
                 "command": f"python -m autograder grade SUBMITTED --jobs {n_jobs} --regrade"},
        "ratio": round(plain_seconds / our_seconds, 2),
        "scores_agree": not differences,
        "differences": differences,
        "load_average_before": load_before,
        "python": platform.python_version(),
        "when": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
    }
    out.mkdir(parents=True, exist_ok=True)
    (out / "bench.json").write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    return report


def format_bench(report: dict) -> str:
    n = report["submissions"]
    plain, mine = report["nbgrader"], report["ours"]
    agree = ("scores agree" if report["scores_agree"]
             else f"scores differ on {len(report['differences'])} submission(s)")
    return "\n".join([
        f"plain nbgrader autograde: {n} submissions in {plain['seconds']:.1f} s = "
        f"{plain['submissions_per_minute']:.1f} submissions/min (sequential, cold kernels)",
        f"autograder grade --jobs {report['jobs']}: {n} submissions in {mine['seconds']:.1f} s = "
        f"{mine['submissions_per_minute']:.1f} submissions/min",
        f"ratio: {report['ratio']:.2f}x on {report['cores']} core(s); {agree}",
    ])


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("submitted", type=Path, metavar="SUBMITTED",
                        help="a batch laid out as SUBMITTED/<student>/<assignment>/<assignment>.ipynb")
    parser.add_argument("--jobs", "-j", type=int, default=None,
                        help=f"our parallel jobs (default: {default_jobs()}, the cores)")
    parser.add_argument("--out", type=Path, default=None,
                        help="working folder and bench.json (default: build/bench)")


def run(args: argparse.Namespace, course: Course) -> int:
    if not args.submitted.is_dir():
        print(f"bench: {args.submitted} is not a folder of submissions")
        return 2
    out = args.out or course.build_dir / "bench"
    try:
        report = bench(course, args.submitted, out, args.jobs)
    except (ValueError, RuntimeError) as error:
        print(f"bench: {error}")
        return 2
    print(format_bench(report))
    print(f"report: {Path(out) / 'bench.json'}")
    if not report["scores_agree"]:
        for d in report["differences"]:
            print(f"  {d['student_id']}/{d['assignment']}: nbgrader {d['nbgrader']}, ours {d['ours']}")
    return 0
