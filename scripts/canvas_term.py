"""A term of a whole class on Canvas, its files built as canvas-lms builds them: step 8 of
scripts/class_rehearsal.py.

The class (TERM students and Canvas's test student) hands in one assignment of a temporary course
made of that assignment's folders, whose calendar is in a zone with an offset (a due date of
23:59 at -05:00, `timezone = "America/New_York"`). What Canvas gives the instructor:

  submissions.zip  "Download Submissions", lib/content_zipper.rb: `{sortable name, downcased, word
                   characters only}_{LATE_}{user id}_{file id}_{file name}` per uploaded file. In
                   it: students late by 1 to 6 days (marked LATE), four with an extension (one of
                   them late even so), one who uploaded two files, one notebook that is not JSON,
                   and a student who handed in `x_777_999999_201_555_mine.ipynb`, once as its
                   name and once inside a folder (older Canvas kept a `/` of a file name), where
                   777 is a classmate whose own notebook is `Untitled0.ipynb`.
  times/           the Submissions API's answer in pages of 100 (lib/api.rb, `paginate`), saved one
                   file a page as docs/instructors.md's loop saves them: every student's record,
                   unsubmitted ones included, with `cached_due_date` (the extensions).
  gradebook.csv    Grades > Export, lib/gradebook_exporter.rb: a custom column, the assignment
                   posted by hand (the "Manual Posting" row before "    Points Possible"), another
                   assignment's grades, the read-only totals, the test student last.

Then collect (--times times/), grade, export --to canvas, feedback, and every number is checked
against what this file computes on its own: each student's lateness, penalty and import cell.
"""

from __future__ import annotations

import csv
import json
import math
import shutil
import zipfile
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path

ZONE = "America/New_York"
DUE = datetime.fromisoformat("2026-11-09T23:59:00-05:00")  # EST: 04:59 UTC the next day
PER_DAY, CAP = 0.1, 0.5  # the term's late policy: of the max score, per started day; at most
CANVAS_ID, OTHER_ID = 5501, 5502
PAGE = 100  # per_page: Canvas's largest page
VICTIM, HOSTILE = 777, "x_777_999999_201_555_mine.ipynb"
TEST_STUDENT = 318999  # Canvas's "Test Student" (Student View): in the API and the gradebook
LAST = ("Abbott", "Baker", "Chen", "Diaz", "Evans", "Fischer", "Garcia", "Huang", "Ibrahim",
        "Jones", "Kowalski", "Lopez")
FIRST = ("Ada", "Ben", "Cleo", "Dev", "Eli", "Fay", "Gus", "Hana", "Ivo", "Joy")


@dataclass(frozen=True)
class Student:
    """One student of the term and what they hand in."""

    user: int
    sortable: str  # "Last, First", as Canvas's gradebook shows it
    kind: str  # right, wrong, broken, none (handed in nothing), victim, hostile, twice
    hours: float = -5.0  # handed in this long after the assignment's due date (UTC instants)
    extension_days: int = 0  # cached_due_date = DUE + this many days

    @property
    def file_id(self) -> int:
        return 80000 + 10 * (self.user % 1000)

    @property
    def submitted_at(self) -> datetime | None:
        return None if self.kind == "none" else DUE + timedelta(hours=self.hours)

    @property
    def due(self) -> datetime:
        return DUE + timedelta(days=self.extension_days)

    @property
    def days_late(self) -> int:
        """Started days after the student's own due date, counted here on its own."""
        when = self.submitted_at
        if when is None or when <= self.due:
            return 0
        return math.ceil((when - self.due).total_seconds() / 86400)


def the_class(size: int) -> list[Student]:
    """`size` students (at least 30): the cases the module's docstring lists, the rest right and
    on time, one of them at 21:04 on the due date there (02:04 UTC the next day)."""
    if size < 30:
        raise ValueError("a term rehearsal needs at least 30 students")
    names = [f"{last}, {first}" for last in LAST for first in FIRST]
    users = [VICTIM] + [318100 + k for k in range(1, size)]
    kinds: dict[int, tuple] = {
        0: ("victim", -30.0), 1: ("hostile", -3.0), 2: ("broken", -1.0),
        **{k: ("none", 0.0) for k in range(3, 9)},
        **{k: ("right", 1.0 + 24 * (k - 9)) for k in range(9, 15)},  # 1 to 6 started days late
        **{k: ("right", 50.0, 3) for k in range(15, 18)},  # before their extension
        18: ("right", 74.0, 3),  # past their extension by two hours: 1 day late
        **{k: ("wrong", -12.0) for k in range(19, 25)},
        25: ("twice", -8.0),
        26: ("right", -2.0 - 55 / 60),  # 21:04 local, 02:04 UTC the next day
    }
    return [Student(users[k], names[k % len(names)], *kinds.get(k, ("right", -48.0 + k % 24)))
            for k in range(size)]


def canvas_name(student: Student) -> str:
    """lib/content_zipper.rb's prefix: the sortable name downcased and stripped to word
    characters (sanitize_user_name, sanitize_file_name), LATE when Canvas counts it late."""
    name = "".join(c for c in student.sortable.lower() if c.isalnum() or c == "_")
    return "_".join([name, *(["LATE"] if student.days_late else []), str(student.user)])


@dataclass
class TermFiles:
    download: Path
    times: Path
    gradebook: Path


def write_term(students: list[Student], notebooks: dict[str, bytes], assignment: str,
               points: float, folder: Path) -> TermFiles:
    """submissions.zip, times/page-NNN.json and gradebook.csv in `folder`, as Canvas writes them."""
    folder.mkdir(parents=True)
    download, times, gradebook = folder / "submissions.zip", folder / "times", folder / "gradebook.csv"
    records = []
    with zipfile.ZipFile(download, "w") as archive:
        for s in students:
            files = []
            if s.kind == "victim":
                files = [(s.file_id, "Untitled0.ipynb", notebooks["right"])]
            elif s.kind == "hostile":
                files = [(s.file_id, HOSTILE, notebooks["wrong"]),
                         (s.file_id + 1, f"hw/{HOSTILE}", notebooks["wrong"])]
            elif s.kind == "twice":
                files = [(s.file_id, f"{assignment}.ipynb", notebooks["wrong"]),
                         (s.file_id + 1, f"Copy of {assignment}.ipynb", notebooks["right"])]
            elif s.kind != "none":
                files = [(s.file_id, f"{assignment}.ipynb", notebooks[s.kind])]
            for file_id, name, data in files:
                archive.writestr(f"{canvas_name(s)}_{file_id}_{name}", data)
            records.append(api_record(s, files))
    records.append({"id": 999, "user_id": TEST_STUDENT, "assignment_id": CANVAS_ID,
                    "submitted_at": None, "workflow_state": "unsubmitted", "late": False,
                    "missing": False, "cached_due_date": iso(DUE)})
    times.mkdir()
    for page in range(math.ceil(len(records) / PAGE)):
        (times / f"page-{page + 1:03d}.json").write_text(
            json.dumps(records[page * PAGE:(page + 1) * PAGE], indent=1))
    write_gradebook(students, points, gradebook)
    return TermFiles(download, times, gradebook)


def iso(when: datetime) -> str:
    """As Canvas's API writes times: ISO 8601 in UTC with a Z."""
    return when.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def api_record(s: Student, files: list[tuple]) -> dict:
    """A Submission object of lib/api/v1/submission.rb (the fields collect reads, and a few more)."""
    record = {"id": 600000 + s.user % 1000, "user_id": s.user, "assignment_id": CANVAS_ID,
              "submitted_at": iso(s.submitted_at) if s.submitted_at else None,
              "cached_due_date": iso(s.due), "late": bool(s.days_late), "missing": s.kind == "none",
              "workflow_state": "unsubmitted" if s.kind == "none" else "submitted",
              "seconds_late": 0, "submission_type": None if s.kind == "none" else "online_upload"}
    if files:
        record["attachments"] = [{"id": file_id, "display_name": name.replace("/", "_"),
                                  "filename": name, "content-type": "application/x-ipynb+json"}
                                 for file_id, name, _ in files]
    return record


GRADEBOOK_TOTALS = ("Current Points", "Final Points", "Current Score", "Unposted Current Score",
                    "Final Score", "Unposted Final Score")


def write_gradebook(students: list[Student], points: float, path: Path) -> None:
    """lib/gradebook_exporter.rb's CSV: header, the Manual Posting row (the term's assignment
    posts by hand), "    Points Possible", the students by sortable name, the test student last."""
    column, other = f"HW - Term rehearsal ({CANVAS_ID})", f"Participation ({OTHER_ID})"
    totals = [f"Assignments {t}" for t in GRADEBOOK_TOTALS] + list(GRADEBOOK_TOTALS)
    identity = ["Student", "ID", "SIS User ID", "SIS Login ID", "Section"]
    rows = [identity + ["Notes", column, other] + totals,
            [""] * len(identity) + ["", "Manual Posting", ""] + [""] * len(totals),
            ["    Points Possible"] + [""] * (len(identity) - 1) + ["", f"{points:.2f}", "5.00"]
            + ["(read only)"] * len(totals)]
    people = sorted(students, key=lambda s: s.sortable) + [
        Student(TEST_STUDENT, "Student, Test", "none")]
    for s in people:
        rows.append([s.sortable, s.user, "" if s.user == TEST_STUDENT else f"S{s.user}",
                     "" if s.user == TEST_STUDENT else f"u{s.user}@uni.edu", "Lecture 001",
                     "extension" if s.extension_days else "", "",
                     "" if s.user == TEST_STUDENT else "5.00"] + ["5.00"] * len(totals))
    with open(path, "w", newline="", encoding="utf-8-sig") as f:  # Canvas writes a BOM
        csv.writer(f).writerows(rows)


def term_course(root: Path, assignment: str, course_root: Path) -> None:
    """A course of `assignment` alone, copied from `course_root`, with the term's calendar."""
    for part in ("source", "grading"):
        if (course_root / part / assignment).is_dir():
            shutil.copytree(course_root / part / assignment, root / part / assignment,
                            ignore=shutil.ignore_patterns("__pycache__", ".ipynb_checkpoints"))
    (root / "pyproject.toml").write_text(
        f'[tool.course]\ntimezone = "{ZONE}"\nlate_penalty_per_day = {PER_DAY}\n'
        f'late_penalty_cap = {CAP}\n\n[tool.course.due]\n"{assignment}" = "{DUE.isoformat()}"\n\n'
        f'[tool.course.canvas_id]\n"{assignment}" = {CANVAS_ID}\n')


def fmt(value: float) -> str:
    return f"{value:g}"


def expected_cells(students: list[Student], full: float, wrong: float) -> dict[str, str]:
    """Each student's cell of the Canvas import, computed here: the score (full marks, or what the
    wrong answer earns) less min(per day x started days, cap) x full marks, at most the score; an
    empty cell for nothing handed in, a notebook that is not one, the test student."""
    cells = {str(TEST_STUDENT): ""}
    for s in students:
        if s.kind in ("none", "broken"):
            cells[str(s.user)] = ""
            continue
        score = wrong if s.kind in ("wrong", "hostile") else full
        penalty = min(min(PER_DAY * s.days_late, CAP) * full, score)
        cells[str(s.user)] = fmt(round(score - penalty, 6))
    return cells


def shown(when: datetime) -> str:
    """A time as the feedback pages must show it: in the course's zone, with its name."""
    from zoneinfo import ZoneInfo

    here = when.astimezone(ZoneInfo(ZONE))
    return f"{here:%Y-%m-%d %H:%M} {here.tzname()}"


def read_rows(path: Path) -> list[list[str]]:
    with open(path, newline="", encoding="utf-8-sig") as f:
        return list(csv.reader(f))


def rehearse_term(course_root: Path, assignment: str, size: int, jobs: int, work: Path,
                  autograder, capture, class_notebooks) -> dict[str, bool]:
    """Step 8: the term in `work`, with class_rehearsal's runner (`autograder`, `capture`) and its
    hand-ins (`class_notebooks`); returns each check and whether it holds."""
    from autograder.course import exercises
    from autograder.course.layout import Course

    root = work / "term-course"
    term_course(root, assignment, course_root)
    course = Course(root)
    full = exercises.of_notebook(course.source_notebook(assignment)).max_score
    notebooks = class_notebooks(course, assignment)
    students = the_class(size)
    files = write_term(students, notebooks, assignment, full, work / "canvas-term")
    pages = sorted(files.times.iterdir())
    print(f"{len(students)} students and Canvas's test student; times in "
          + ", ".join(f"{p.name} ({len(json.loads(p.read_text()))})" for p in pages))
    submitted, grades = work / "term-submitted", work / "term-grades"
    collected = capture(lambda: autograder(course, "collect", files.download, "--from", "canvas",
                                           "-a", assignment, "--out", submitted, "--times",
                                           files.times))
    autograder(course, "grade", submitted, "--out", grades, "--jobs", jobs)
    exported = capture(lambda: autograder(course, "export", grades, "--to", "canvas", "--roster",
                                          files.gradebook))
    autograder(course, "feedback", grades, "--submitted", submitted, "--roster", files.gradebook,
               "--lms", "canvas")
    return term_checks(students, notebooks, full, assignment, work, collected, exported)


def term_checks(students: list[Student], notebooks: dict[str, bytes], full: float, assignment: str,
                work: Path, collected: str, exported: str) -> dict[str, bool]:
    """Each check of step 8 on what its commands left in `work` and printed, and whether it holds."""
    pages = sorted((work / "canvas-term" / "times").iterdir())
    submitted, grades = work / "term-submitted", work / "term-grades"
    by_user = {str(s.user): s for s in students}
    handed_in = [s for s in students if s.kind != "none"]
    graded = {row[0]: row for row in read_rows(grades / "grades.csv")[1:]}
    status = {u: row[4] for u, row in graded.items()}
    wrong = {float(graded[str(s.user)][2]) for s in students if s.kind in ("wrong", "hostile")}
    imported = read_rows(grades / "export-canvas.csv")
    cells = {row[1]: row[-1] for row in imported[3:]}
    expected = expected_cells(students, full, min(wrong) if wrong else -1)
    with open(grades / "returned" / "feedback.csv", newline="") as f:
        totals = {row["student_id"]: row["total"] for row in csv.DictReader(f)}
    with open(submitted / "lms.csv", newline="") as f:
        lms = {row["student_id"]: row for row in csv.DictReader(f)}

    def index(s: Student) -> str:
        with zipfile.ZipFile(grades / "returned" / f"{s.user}_feedback.zip") as archive:
            return archive.read("index.html").decode()

    midnight, extended = students[26], students[15]  # the_class's 21:04 one, an extension
    extensions = [s for s in students if s.extension_days]
    late = {str(s.user): s.days_late for s in handed_in if s.days_late}
    checks = {
        f"the Submissions API came in {len(pages)} pages of {PAGE} at most, {len(students) + 1} "
        "records": [len(json.loads(p.read_text())) for p in pages]
        == [min(PAGE, len(students) + 1 - PAGE * n) for n in range(len(pages))] and len(pages) >= 2,
        f"collect placed the {len(handed_in)} who handed in, each with a time": (
            f"{len(handed_in)} notebook(s) of {assignment} placed" in collected
            and f"({len(handed_in)} with a submission time)" in collected),
        "the only files not placed are the older of two uploads, twice": (
            "2 file(s) not placed" in collected and collected.count("a second notebook") == 2),
        f"{HOSTILE} placed nothing for user {VICTIM}": (
            lms[str(VICTIM)]["file_id"] == str(by_user[str(VICTIM)].file_id)
            and (submitted / str(VICTIM) / assignment / f"{assignment}.ipynb").read_bytes()
            == notebooks["right"]),
        f"collect named the {len(extensions)} extensions": (
            f"{len(extensions)} student(s) with their own due date in Canvas" in collected),
        "Canvas's LATE marker is read for each late student": sorted(
            u for u, row in lms.items() if row["late"]) == sorted(late),
        f"grade: {len(handed_in) - 1} graded, the notebook that is not JSON an error": sorted(
            status.values()) == ["error"] + ["graded"] * (len(handed_in) - 1)
        and status[str(next(s.user for s in students if s.kind == "broken"))] == "error",
        "every wrong answer scores the same, below full marks": len(wrong) == 1 and min(wrong) < full,
        "the import keeps Canvas's identity, Manual Posting and Points Possible rows": (
            imported[0] == ["Student", "ID", "SIS User ID", "SIS Login ID", "Section",
                            f"HW - Term rehearsal ({CANVAS_ID})"]
            and imported[1] == [""] * 5 + ["Manual Posting"]
            and imported[2] == ["Points Possible", "", "", "", "", fmt(full)]),
        f"each of the {len(expected)} import cells is the one computed here (zone, extensions, "
        "penalties, the cap)": cells == expected,
        "export says the column posts by hand": "posts this assignment's grades by hand" in exported,
        "feedback.csv's totals are the import's cells": set(totals) == {
            str(s.user) for s in handed_in} and all(totals[u] == cells[u] for u in totals),
        f"a page shows {shown(midnight.submitted_at)}, due {shown(DUE)}, 0 days late": (
            f"<td>{shown(midnight.submitted_at)}</td><td>{shown(DUE)}</td>" in index(midnight)
            and cells[str(midnight.user)] == fmt(full)),
        "an extension's page shows the student's own due date": (
            f"<td>{shown(extended.due)}</td>" in index(extended)
            and "your due date is your own" in index(extended)),
    }
    return checks
