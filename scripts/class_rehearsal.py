"""A class in front of the course, offline, in a temporary folder: `python scripts/class_rehearsal.py`.

It runs what an instructor runs in a term, with `python -m autograder`, and prints what each
step gives:

  1. publish       the student repository's tree (its listing)
  2. a class       four students hand in ASSIGNMENT on Canvas: a right answer (the solution), a
                   wrong one (the first known-wrong answer of grading/ASSIGNMENT/mutants), a right
                   one handed in a day late, a notebook that is not JSON. Written as Canvas's
                   "Download Submissions" zip names them, with the Submissions API's times
                   (autograder/canvas_times.py) and Canvas's gradebook export as the roster
  3. collect       --from canvas --times
  4. grade         --jobs JOBS
  5. export        to canvas, gradescope and csv (each printed)
  6. feedback      the students' archives and the zip for Canvas's Re-upload Submissions
  7. gradescope    the autograder.zip, unpacked as Gradescope does; its run_autograder grades
                   one hand-in (--gradescope-grades: the wrong one) and its results.json is printed

The times are placed around the assignment's due date in [tool.course.due] (none: no penalty).
Nothing is written in the course but build/work (grade's private folders). Exit status: 0 when
every step worked and each student got the score the rehearsal expects, else 1.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import subprocess
import sys
import tempfile
import time
import zipfile
from datetime import datetime, timedelta, timezone
from pathlib import Path

import nbformat

import autograder as package
from autograder import grading_folder
from autograder.__main__ import main as autograder_main
from autograder.course import REPO_ROOT
from autograder.gradescope import unpack
from autograder.lateness import course_policy
from autograder.layout import Course, CourseError
from autograder.mutants import apply_mutant, parse_mutant
from autograder.notebooks import read_notebook, test_points

CANVAS_ASSIGNMENT_ID = 4242
# (sortable name as Canvas writes it, Canvas user id, file id, kind, hours after the due date)
CLASS = (("lovelaceada", 1001, 7001, "right", -24.0),
         ("turingalan", 1002, 7002, "wrong", -2.0),
         ("hoppergrace", 1003, 7003, "late", 27.0),
         ("babbagecharles", 1004, 7004, "broken", -0.1))


_START = time.perf_counter()


def say(title: str) -> None:
    print(f"\n== {title}  [{time.perf_counter() - _START:.0f} s in]", flush=True)


def autograder(course: Course, *args) -> None:
    """`python -m autograder ARGS --root COURSE`, shown and run in this process (one import of
    torch and nbgrader for all steps); stop if it fails."""
    argv = [*map(str, args), "--root", str(course.root)]
    print("$ python -m autograder " + " ".join(argv), flush=True)
    status = autograder_main(argv)
    sys.stdout.flush()
    if status != 0:
        raise SystemExit(f"rehearsal stopped: the command above exited {status}")


def step(command: list[str], env: dict | None = None) -> None:
    """Run one program as an instructor would, its output going to ours; stop if it fails."""
    print("$ " + " ".join(command), flush=True)
    done = subprocess.run(command, env=env, check=False)
    if done.returncode != 0:
        raise SystemExit(f"rehearsal stopped: the command above exited {done.returncode}")


def show_file(path: Path) -> None:
    print(f"--- {path.name}")
    print(path.read_text(encoding="utf-8").rstrip())


def listing(folder: Path) -> list[str]:
    return sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file())


def class_notebooks(course: Course, assignment: str) -> dict[str, bytes]:
    """The four hand-ins: right, wrong (a mutant), late (right again), broken (not JSON)."""
    source = read_notebook(course.source_notebook(assignment))
    mutants = grading_folder.files(course.root, assignment, "mutants")
    if not mutants:
        raise SystemExit(f"rehearsal: grading/{assignment}/mutants/ holds no known-wrong answer")
    mutant = parse_mutant(mutants[0])
    print(f"the wrong answer: {mutants[0].name}: {mutant.mistake}")
    right = nbformat.writes(source).encode()
    wrong = nbformat.writes(apply_mutant(source, mutant, truncate=False)).encode()
    return {"right": right, "wrong": wrong, "late": right, "broken": right[: len(right) // 3]}


def canvas_download(course: Course, assignment: str, folder: Path) -> tuple[Path, Path, Path, Path]:
    """submissions.zip, submissions.json (the API's times), gradebook.csv (Canvas's export, the
    roster) and gradescope_roster.csv for the class, in `folder`."""
    folder.mkdir(parents=True)
    policy = course_policy(course.root, course.assignments())
    due = policy.due.get(assignment) or datetime(2026, 12, 1, 23, 59, tzinfo=timezone.utc)
    if assignment not in policy.due:
        print(f"{assignment} has no due date in [tool.course.due]: no late penalty will show")
    notebooks = class_notebooks(course, assignment)
    download, times = folder / "submissions.zip", folder / "submissions.json"
    records = []
    with zipfile.ZipFile(download, "w") as archive:
        for name, user, file_id, kind, hours in CLASS:
            late = "late_" if hours > 0 else ""
            filename = f"Copy of {assignment}.ipynb" if kind == "wrong" else f"{assignment}.ipynb"
            archive.writestr(f"{name}_{late}{user}_{file_id}_{filename}", notebooks[kind])
            when = (due + timedelta(hours=hours)).astimezone(timezone.utc)
            records.append({"id": 500 + user % 100, "user_id": user, "assignment_id": CANVAS_ASSIGNMENT_ID,
                            "submitted_at": when.strftime("%Y-%m-%dT%H:%M:%SZ"), "late": hours > 0,
                            "attachments": [{"id": file_id, "display_name": filename}]})
    times.write_text(json.dumps(records, indent=1))
    gradebook, gradescope = folder / "gradebook.csv", folder / "gradescope_roster.csv"
    points = sum(test_points(read_notebook(course.source_notebook(assignment))).values())
    with open(gradebook, "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["Student", "ID", "SIS User ID", "SIS Login ID", "Section",
                         f"{assignment} ({CANVAS_ASSIGNMENT_ID})"])
        writer.writerow(["    Points Possible", "", "", "", "", f"{points:g}"])
        for name, user, *_ in CLASS:
            writer.writerow([name, user, f"S{user}", name[:6], "Lab A", ""])
    with open(gradescope, "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["First Name", "Last Name", "SID", "Email", "Role", "Sections"])
        for name, user, *_ in CLASS:
            writer.writerow([name, "", user, f"{name}@uni.edu", "Student", "1"])
    return download, times, gradebook, gradescope


def run_autograder(course: Course, assignment: str, notebook: bytes, work: Path) -> dict:
    """Build Gradescope's zip, lay it out as /autograder in `work`, grade `notebook` there."""
    autograder(course, "gradescope", assignment, "--out", work / "zip")
    root = work / "autograder"
    unpack(work / "zip" / "autograder.zip", root / "source")
    (root / "submission").mkdir(parents=True)
    (root / "submission" / f"{assignment}.ipynb").write_bytes(notebook)
    package_root = Path(package.__file__).resolve().parent.parent
    env = {**os.environ, "AUTOGRADER_GRADESCOPE_ROOT": str(root),
           "AUTOGRADER_GRADESCOPE_PYTHON": sys.executable,  # setup.sh's venv: this one
           "PYTHONPATH": os.pathsep.join([str(package_root), os.environ.get("PYTHONPATH", "")])}
    step([str(root / "source" / "run_autograder")], env=env)
    return json.loads((root / "results" / "results.json").read_text())


def rehearse(course: Course, assignment: str, jobs: int, work: Path, on_gradescope: str = "wrong") -> bool:
    """Every step in `work`; True when each student got what the rehearsal expects."""
    say(f"1. publish: the student repository's tree ({assignment} only)")
    autograder(course, "publish", work / "student-repository", assignment)
    print("\n".join(listing(work / "student-repository")))

    say("2. a class of four hands in on Canvas (Download Submissions, Submissions API, gradebook)")
    download, times, gradebook, gradescope_roster = canvas_download(course, assignment, work / "canvas")
    with zipfile.ZipFile(download) as archive:
        print("\n".join(archive.namelist()))

    say("3. collect")
    submitted, grades = work / "submitted", work / "grades"
    autograder(course, "collect", download, "--from", "canvas", "-a", assignment,
               "--out", submitted, "--times", times)
    show_file(submitted / "lms.csv")

    say("4. grade")
    autograder(course, "grade", submitted, "--out", grades, "--jobs", jobs,
               "--assignment", assignment)
    show_file(grades / "grades.csv")

    say("5. export")
    for target, roster in (("canvas", gradebook), ("gradescope", gradescope_roster), ("csv", None)):
        autograder(course, "export", grades, "--to", target,
                   *(["--roster", roster] if roster else []))
        show_file(grades / f"export-{target}.csv")

    say("6. feedback")
    autograder(course, "feedback", grades, "--submitted", submitted)
    returned = grades / "returned"
    print("\n".join(listing(returned)))
    with zipfile.ZipFile(returned / "canvas" / f"{assignment}.zip") as archive:
        print(f"--- canvas/{assignment}.zip:\n" + "\n".join(archive.namelist()))

    say(f"7. Gradescope: run_autograder on the {on_gradescope} hand-in")
    user = next(str(user) for _, user, _, kind, _ in CLASS if kind == on_gradescope)
    handed_in = (submitted / user / assignment / f"{assignment}.ipynb").read_bytes()
    results = run_autograder(course, assignment, handed_in, work / "gradescope")
    print(json.dumps(results, indent=1))

    return expected(grades, assignment, results, user)


def expected(grades: Path, assignment: str, results: dict, on_gradescope: str) -> bool:
    """Say whether each student scored as the rehearsal means them to."""
    with open(grades / "grades.csv", newline="") as f:
        rows = {r["student_id"]: r for r in csv.DictReader(f)}
    with open(grades / "export-csv.csv", newline="") as f:
        final = {r["student_id"]: r for r in csv.DictReader(f)}
    right = rows["1001"]
    checks = {
        "the right answer has full marks": right["status"] == "graded" and right["score"] == right["max_score"],
        "the wrong answer loses points": float(rows["1002"]["score"]) < float(rows["1002"]["max_score"]),
        "the late one scores full before its penalty": rows["1003"]["score"] == right["max_score"],
        "the late one's export shows its penalty": final["1003"][f"{assignment} late penalty"] not in ("", "0"),
        "the broken notebook is an error with 0": (rows["1004"]["status"], rows["1004"]["score"]) == ("error", "0"),
        "Gradescope agrees with grade": results["score"] == float(rows[on_gradescope]["score"]),
    }
    say("the rehearsal's checks")
    for what, ok in checks.items():
        print(f"{'ok ' if ok else 'FAILED'}  {what}")
    return all(checks.values())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--assignment", "-a", default="03_custom_functions",
                        help="the assignment the class hands in (default: 03_custom_functions, a quick one)")
    parser.add_argument("--jobs", type=int, default=2, help="grade's parallel kernels (default 2)")
    parser.add_argument("--gradescope-grades", choices=[kind for *_, kind, _ in CLASS], default="wrong",
                        help="the hand-in run_autograder grades (default: wrong; broken is quickest)")
    parser.add_argument("--root", type=Path, default=REPO_ROOT, help="the course (default: this checkout)")
    parser.add_argument("--keep", type=Path, default=None, metavar="DIR",
                        help="work in DIR (must not exist) and keep it, instead of a temporary folder")
    args = parser.parse_args(argv)
    course = Course(args.root.resolve())
    try:
        (assignment,) = course.select([args.assignment])
    except CourseError as error:
        parser.error(str(error))
    if args.keep:
        if args.keep.exists():
            parser.error(f"--keep {args.keep} exists; name a folder that does not")
        args.keep.mkdir(parents=True)
        return 0 if rehearse(course, assignment, args.jobs, args.keep.resolve(), args.gradescope_grades) else 1
    with tempfile.TemporaryDirectory(prefix="class-rehearsal-") as work:
        return 0 if rehearse(course, assignment, args.jobs, Path(work), args.gradescope_grades) else 1


if __name__ == "__main__":
    raise SystemExit(main())
