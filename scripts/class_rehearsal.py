"""A class in front of the course, offline, in a temporary folder: `python scripts/class_rehearsal.py`.

It runs what an instructor runs in a term, with `python -m autograder`, and prints what each
step gives:

  1. publish       by the calendar ([tool.course.release]): the student repository as it is the
                   morning each of the first three assignments (and ASSIGNMENT) opens, --now
  2. a class       four students hand in ASSIGNMENT on Canvas: a right answer (the solution), a
                   wrong one (the first known-wrong answer of grading/ASSIGNMENT/mutants), a right
                   one handed in a day late, a notebook that is not JSON. Written as Canvas's
                   "Download Submissions" zip names them, with the Submissions API's times
                   (autograder/classroom/canvas_times.py); the zip also holds what a real download can: a
                   corrupt upload (bad CRC), a symbolic link to the instructor's source notebook,
                   two files of one name, a 21 MB upload, macOS's hidden files. The roster is
                   Canvas's gradebook export, with grades in the other assignments' columns and a
                   display name that is a spreadsheet formula
  3. collect       --from canvas --times (the four placed, each bad member named)
  4. grade         --jobs JOBS (ASSIGNMENT, the one collected)
  5. export        to canvas, gradescope and csv (each printed); the gradebook's other columns
                   stay out of the import, so Canvas keeps them
  6. feedback      the students' archives (names from the roster) and the zip for Canvas's
                   Re-upload Submissions
  7. gradescope    the autograder.zip, unpacked as Gradescope does; its run_autograder grades
                   one hand-in (--gradescope-grades: the wrong one) and its results.json is printed
  8. a term        --term students (120 by default; 0: none) on Canvas, in a course of one
                   assignment (--term-assignment of --term-root) whose calendar is in a zone with
                   an offset: the download, the Submissions API in pages and the gradebook export
                   built as canvas-lms builds them (scripts/canvas_term.py: extensions, a Manual
                   Posting row, a file named as another student's), collect, grade, export,
                   feedback, and each student's lateness, penalty and import cell checked

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
from canvas_term import rehearse_term  # scripts/canvas_term.py, beside this file

import autograder as package
from autograder.__main__ import main as autograder_main
from autograder.classroom.gradescope import unpack
from autograder.course import exercises, grading_folder
from autograder.course.lateness import course_policy
from autograder.course.layout import Course, CourseError
from autograder.course.mutants import apply_mutant, parse_mutant
from autograder.course.notebooks import read_notebook
from autograder.course.settings import REPO_ROOT
from autograder.course.term import course_term

CANVAS_ASSIGNMENT_ID = 4242
# (sortable name as Canvas writes it, Canvas user id, file id, kind, hours after the due date)
CLASS = (("lovelaceada", 1001, 7001, "right", -24.0),
         ("turingalan", 1002, 7002, "wrong", -2.0),
         ("hoppergrace", 1003, 7003, "late", 27.0),
         ("babbagecharles", 1004, 7004, "broken", -0.1))
# The gradebook's Student column (Canvas shows "Last, First"); 1004 chose a formula as a name.
NAMES = {1001: "Lovelace, Ada", 1002: "Turing, Alan", 1003: "Hopper, Grace",
         1004: "=HYPERLINK(\"http://evil.example\",\"Babbage\")", 1005: "Knuth, Donald",
         1006: "Liskov, Barbara", 1007: "Hamilton, Margaret"}
# Why collect leaves out each bad member of the download (its "not placed" lines say so).
HOSTILE = ("corrupt", "symbolic link", "2 members named so", "over the cap", "macOS resource fork",
           "hidden name")
# Grades Canvas holds already in other assignments' columns: the import must leave them be.
OTHER_COLUMNS = {"01_numpy_mlp (4240)": {1001: "18", 1002: "10", 1003: "17", 1004: "12",
                                         1005: "16", 1006: "9", 1007: ""},
                 "Participation (4999)": {1001: "5", 1002: "5", 1003: "4", 1004: "5", 1005: "3",
                                          1006: "5", 1007: "5"}}


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


def corrupt_member(path: Path, member: str) -> None:
    """Flip a byte of `member`'s stored data in the zip at `path`: its CRC no longer matches."""
    with zipfile.ZipFile(path) as archive:
        info = archive.getinfo(member)
    data = bytearray(path.read_bytes())
    start = info.header_offset + 30 + len(info.filename.encode()) + len(info.extra)
    data[start + info.compress_size // 2] ^= 0xFF
    path.write_bytes(bytes(data))


def canvas_download(course: Course, assignment: str, folder: Path) -> tuple[Path, Path, Path, Path]:
    """submissions.zip, submissions.json (the API's times), gradebook.csv (Canvas's export, the
    roster) and gradescope_roster.csv for the class, in `folder`."""
    import warnings

    folder.mkdir(parents=True)
    policy = course_policy(course.root, course.assignments())
    due = policy.due.get(assignment) or datetime(2026, 12, 1, 23, 59, tzinfo=timezone.utc)
    if assignment not in policy.due:
        print(f"{assignment} has no due date in [tool.course.due]: no late penalty will show")
    notebooks = class_notebooks(course, assignment)
    download, times = folder / "submissions.zip", folder / "submissions.json"
    records = []
    link = zipfile.ZipInfo(f"liskovbarbara_1006_7006_{assignment}.ipynb")
    link.external_attr = 0o120777 << 16  # a symbolic link, as `zip --symlinks` stores one
    corrupt = f"knuthdonald_1005_7005_{assignment}.ipynb"
    with warnings.catch_warnings(), zipfile.ZipFile(download, "w") as archive:
        warnings.simplefilter("ignore")  # the duplicate name is on purpose
        for name, user, file_id, kind, hours in CLASS:
            late = "LATE_" if hours > 0 else ""  # canvas-lms lib/content_zipper.rb
            filename = f"Copy of {assignment}.ipynb" if kind == "wrong" else f"{assignment}.ipynb"
            archive.writestr(f"{name}_{late}{user}_{file_id}_{filename}", notebooks[kind])
            when = (due + timedelta(hours=hours)).astimezone(timezone.utc)
            records.append({"id": 500 + user % 100, "user_id": user, "assignment_id": CANVAS_ASSIGNMENT_ID,
                            "submitted_at": when.strftime("%Y-%m-%dT%H:%M:%SZ"), "late": hours > 0,
                            "attachments": [{"id": file_id, "display_name": filename}]})
        archive.writestr(corrupt, notebooks["right"])
        archive.writestr(link, str(course.source_notebook(assignment)))
        for _ in range(2):  # two uploads of one name: which one she meant cannot be told
            archive.writestr(f"hamiltonmargaret_1007_7007_{assignment}.ipynb", notebooks["right"])
        archive.writestr(f"turingalan_1002_7012_{assignment}.ipynb", b"\0" * (21 * 2**20),
                         compress_type=zipfile.ZIP_DEFLATED)
        archive.writestr(f"__MACOSX/._lovelaceada_1001_7001_{assignment}.ipynb", b"resource fork")
        archive.writestr(".DS_Store", b"\0\0\0\1Bud1")
    corrupt_member(download, corrupt)
    times.write_text(json.dumps(records, indent=1))
    gradebook, gradescope = folder / "gradebook.csv", folder / "gradescope_roster.csv"
    points = exercises.of_notebook(course.source_notebook(assignment)).max_score
    with open(gradebook, "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["Student", "ID", "SIS User ID", "SIS Login ID", "Section", *OTHER_COLUMNS,
                         f"{assignment} ({CANVAS_ASSIGNMENT_ID})", "Current Score"])
        writer.writerow(["    Points Possible", "", "", "", "", "20", "5", f"{points:g}",
                         "(read only)"])
        for user, name in NAMES.items():
            writer.writerow([name, user, f"S{user}", f"u{user}@uni.edu", "Lab A",
                             *(column[user] for column in OTHER_COLUMNS.values()), "", "80"])
    with open(gradescope, "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["First Name", "Last Name", "SID", "Email", "Role", "Sections"])
        for name, user, *_ in CLASS:
            writer.writerow([name, "", user, f"{name}@uni.edu", "Student", "1"])
    return download, times, gradebook, gradescope


def publish_by_the_calendar(course: Course, assignment: str, out: Path) -> dict[str, list[str]]:
    """Publish into `out` at the release time of each of the first three assignments (and of
    `assignment`), an hour after it; returns {time: the release/ folders then}."""
    term = course_term(course.root, course.assignments())
    dated = sorted(term.release, key=lambda a: term.release[a])
    moments = sorted({term.release[a] for a in dated[:3] + ([assignment] if assignment in dated else [])})
    seen = {}
    for when in moments:
        now = (when + timedelta(hours=1)).isoformat()
        autograder(course, "publish", out, "--now", now)
        seen[now] = sorted(p.name for p in (out / "release").iterdir())
        print(f"  at {now}: release/ holds {', '.join(seen[now])}")
    if assignment not in dated:
        autograder(course, "publish", out, assignment)
    return seen


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


def rehearse(course: Course, assignment: str, jobs: int, work: Path, on_gradescope: str = "wrong",
             term: tuple[int, Path, str] = (0, REPO_ROOT, "")) -> bool:
    """Every step in `work`; True when each student got what the rehearsal expects. term: the
    size of step 8's class, the course and the assignment it hands in (size 0: no step 8)."""
    say("1. publish by the calendar: the student repository the morning each assignment opens")
    calendar = publish_by_the_calendar(course, assignment, work / "student-repository")
    print("\n".join(listing(work / "student-repository")))

    say("2. a class of four hands in on Canvas (Download Submissions, Submissions API, gradebook)")
    download, times, gradebook, gradescope_roster = canvas_download(course, assignment, work / "canvas")
    with zipfile.ZipFile(download) as archive:
        print("\n".join(archive.namelist()))
    gradebook_before = gradebook.read_bytes()

    say("3. collect")
    submitted, grades = work / "submitted", work / "grades"
    collected = capture(lambda: autograder(course, "collect", download, "--from", "canvas", "-a",
                                           assignment, "--out", submitted, "--times", times))
    show_file(submitted / "lms.csv")

    say("4. grade (what was collected)")
    autograder(course, "grade", submitted, "--out", grades, "--jobs", jobs)
    show_file(grades / "grades.csv")

    say("5. export")
    exported = {}
    for target, roster in (("canvas", gradebook), ("gradescope", gradescope_roster), ("csv", None)):
        exported[target] = capture(lambda target=target, roster=roster: autograder(
            course, "export", grades, "--to", target, *(["--roster", roster] if roster else [])))
        show_file(grades / f"export-{target}.csv")

    say("6. feedback")
    autograder(course, "feedback", grades, "--submitted", submitted, "--roster", gradebook,
               "--lms", "canvas")
    returned = grades / "returned"
    print("\n".join(listing(returned)))
    with zipfile.ZipFile(returned / "canvas" / f"{assignment}.zip") as archive:
        print(f"--- canvas/{assignment}.zip:\n" + "\n".join(archive.namelist()))

    say(f"7. Gradescope: run_autograder on the {on_gradescope} hand-in")
    user = next(str(user) for _, user, _, kind, _ in CLASS if kind == on_gradescope)
    handed_in = (submitted / user / assignment / f"{assignment}.ipynb").read_bytes()
    results = run_autograder(course, assignment, handed_in, work / "gradescope")
    print(json.dumps(results, indent=1))

    facts = {"calendar": calendar, "collected": collected, "exported": exported,
             "gradebook unchanged": gradebook.read_bytes() == gradebook_before}
    checks = expected(course, grades, assignment, results, user, facts)
    size, term_root, term_assignment = term
    if size:
        say(f"8. a term of {size} on Canvas: paged times, a Manual Posting row, a zone with an "
            "offset, extensions")
        checks.update(rehearse_term(Path(term_root), term_assignment or assignment, size, jobs, work,
                                    autograder, capture, class_notebooks))
    say("the rehearsal's checks")
    for what, ok in checks.items():
        print(f"{'ok ' if ok else 'FAILED'}  {what}")
    return all(checks.values())


def capture(run) -> str:
    """Run `run()`, its stdout and stderr shown and returned as one text."""
    import contextlib
    import io

    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer), contextlib.redirect_stderr(buffer):
        try:
            run()
        finally:
            text = buffer.getvalue()
    print(text, end="", flush=True)
    return text


def expected(course: Course, grades: Path, assignment: str, results: dict, on_gradescope: str,
             facts: dict) -> dict[str, bool]:
    """Whether each step gave what the rehearsal means it to, by check."""
    with open(grades / "grades.csv", newline="") as f:
        rows = {r["student_id"]: r for r in csv.DictReader(f)}
    with open(grades / "export-csv.csv", newline="") as f:
        final = {r["student_id"]: r for r in csv.DictReader(f)}
    with open(grades / "export-canvas.csv", newline="") as f:
        canvas = list(csv.reader(f))
    term = course_term(course.root, course.assignments())
    opened = sorted(term.release, key=lambda a: term.release[a])
    column = f"{assignment} ({CANVAS_ASSIGNMENT_ID})"
    by_id = {row[1]: row for row in canvas[2:]}
    with zipfile.ZipFile(grades / "returned" / "1001_feedback.zip") as archive:
        index = archive.read("index.html").decode()
    right = rows["1001"]
    checks = {
        "each publish holds the assignments opened by then, the earlier ones kept": all(
            set(names) == {a for a in opened if term.release[a] <= datetime.fromisoformat(now)}
            for now, names in facts["calendar"].items()) and len(facts["calendar"]) >= 3,
        "collect placed the four and named each bad member": (
            "4 notebook(s) of" in facts["collected"]
            and all(why in facts["collected"] for why in HOSTILE)),
        "only what was collected is graded": {r["assignment"] for r in rows.values()} == {assignment},
        "the import holds the identity and the graded column only": canvas[0] == [
            "Student", "ID", "SIS User ID", "SIS Login ID", "Section", column],
        "the gradebook's other grades are untouched": facts["gradebook unchanged"] and not any(
            c in canvas[0] for c in OTHER_COLUMNS),
        "students whose upload was bad get an empty cell, not 0": [
            by_id[str(u)][5] for u in (1005, 1006, 1007)] == ["", "", ""],
        "the broken notebook is listed by export and left empty": (
            f"1004/{assignment}: error" in facts["exported"]["canvas"] and by_id["1004"][5] == ""),
        "a formula as a name is neutralized": by_id["1004"][0].startswith("'="),
        "feedback is titled by the roster's name": "Feedback for Ada Lovelace (1001)" in index,
        "the right answer has full marks": right["status"] == "graded" and right["score"] == right["max_score"],
        "the wrong answer loses points": float(rows["1002"]["score"]) < float(rows["1002"]["max_score"]),
        "the late one scores full before its penalty": rows["1003"]["score"] == right["max_score"],
        "the late one's export shows its penalty": final["1003"][f"{assignment} late penalty"] not in ("", "0"),
        "the broken notebook is an error with 0": (rows["1004"]["status"], rows["1004"]["score"]) == ("error", "0"),
        "Gradescope agrees with grade": results["score"] == float(rows[on_gradescope]["score"]),
        "feedback.csv's totals are the import's cells (the broken notebook: empty in both)": all(
            row["total"] == by_id[row["student_id"]][5] for row in feedback_rows(grades)),
    }
    return checks


def feedback_rows(grades: Path) -> list[dict]:
    with open(grades / "returned" / "feedback.csv", newline="") as f:
        return list(csv.DictReader(f))


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
    parser.add_argument("--term", type=int, default=120, metavar="N",
                        help="step 8's class size (default 120; 0: no step 8)")
    parser.add_argument("--term-root", type=Path, default=None, metavar="COURSE",
                        help="the course whose assignment step 8 hands in (default: --root)")
    parser.add_argument("--term-assignment", default=None, metavar="NAME",
                        help="that assignment (default: --assignment)")
    args = parser.parse_args(argv)
    course = Course(args.root.resolve())
    try:
        (assignment,) = course.select([args.assignment])
        term_course = Course((args.term_root or args.root).resolve())
        (term_assignment,) = term_course.select([args.term_assignment or assignment])
    except CourseError as error:
        parser.error(str(error))
    if args.term and args.term < 30:
        parser.error(f"--term {args.term}: a term needs at least 30 students (or 0: none)")
    term = (args.term, term_course.root, term_assignment)
    if args.keep:
        if args.keep.exists():
            parser.error(f"--keep {args.keep} exists; name a folder that does not")
        args.keep.mkdir(parents=True)
        return 0 if rehearse(course, assignment, args.jobs, args.keep.resolve(), args.gradescope_grades,
                             term) else 1
    with tempfile.TemporaryDirectory(prefix="class-rehearsal-") as work:
        return 0 if rehearse(course, assignment, args.jobs, Path(work), args.gradescope_grades,
                             term) else 1


if __name__ == "__main__":
    raise SystemExit(main())
