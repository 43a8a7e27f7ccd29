"""scripts/class_rehearsal.py: a term, offline: publishing by the calendar, a small class handed in
on Canvas with a hostile download, an existing gradebook, late work, Gradescope, feedback; then a
term of 120 on Canvas (scripts/canvas_term.py), its files built as canvas-lms builds them.

Run once, on the quickest assignment with two kernels; run_autograder grades the broken hand-in
(tests/classroom/test_gradescope.py grades real answers with it). The term of 120 hands in the
fixture course's assignment (a few seconds a notebook: 120 of 03 would take minutes). The script
checks its own scores; this test reads what it left behind, as an instructor would.
"""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from autograder.course import exercises
from autograder.course.lateness import course_policy
from autograder.course.settings import REPO_ROOT

ASSIGNMENT = "03_custom_functions"
SCRIPT = REPO_ROOT / "scripts" / "class_rehearsal.py"
TERM_COURSE, TERM_ASSIGNMENT = REPO_ROOT / "tests" / "fixtures" / "course", "00_fixture"
# Full marks from the notebook's metadata: exercises come and go.
FULL = exercises.of_notebook(
    REPO_ROOT / "source" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb").max_score


@pytest.fixture(scope="module")
def rehearsal(tmp_path_factory) -> tuple[Path, str]:
    work = tmp_path_factory.mktemp("rehearsal") / "work"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO_ROOT), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run([sys.executable, str(SCRIPT), "-a", ASSIGNMENT, "--jobs", "2",
                           "--gradescope-grades", "broken", "--keep", str(work), "--term", "120",
                           "--term-root", str(TERM_COURSE), "--term-assignment", TERM_ASSIGNMENT],
                          capture_output=True, text=True, env=env, timeout=1800)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-4000:]
    return work, done.stdout


def rows(path: Path, key: str = "student_id") -> dict[str, dict[str, str]]:
    with open(path, newline="") as f:
        return {row[key]: row for row in csv.DictReader(f)}


@pytest.mark.slow
def test_the_rehearsal_prints_every_step_and_its_checks_pass(rehearsal):
    _, out = rehearsal
    print(out)  # the step timings, for -s
    for step in ("1. publish by the calendar", "2. a class of four", "3. collect", "4. grade",
                 "5. export", "6. feedback", "7. Gradescope", "8. a term of 120 on Canvas"):
        assert f"== {step}" in out
    assert f"release/{ASSIGNMENT}/{ASSIGNMENT}.ipynb" in out and "\nLICENSE\n" in out
    assert "FAILED" not in out and out.count("\nok ") == 16 + 14


@pytest.mark.slow
def test_the_class_is_graded_exported_and_returned(rehearsal):
    work, out = rehearsal
    grades = work / "grades"
    graded = rows(grades / "grades.csv")
    full = f"{FULL:g}"
    assert {s: (r["score"], r["status"]) for s, r in graded.items()} == {
        "1001": (full, "graded"), "1002": (graded["1002"]["score"], "graded"),
        "1003": (full, "graded"), "1004": ("0", "error")}
    assert float(graded["1002"]["score"]) < FULL
    # 27 h late: 2 started days at pyproject.toml's rate per day, of the full marks.
    policy = course_policy(REPO_ROOT, sorted(p.name for p in (REPO_ROOT / "source").iterdir() if p.is_dir()))
    penalty = min(2 * policy.per_day, policy.cap) * FULL
    assert rows(grades / "export-gradescope.csv", "SID")["1003"][f"{ASSIGNMENT} - Lateness (H:M:S)"] == "27:00:00"
    assert float(rows(grades / "export-csv.csv")["1003"][f"{ASSIGNMENT} late penalty"]) == pytest.approx(penalty)
    with zipfile.ZipFile(grades / "returned" / "canvas" / f"{ASSIGNMENT}.zip") as archive:
        assert f"hoppergrace_1003_7003_{ASSIGNMENT}_feedback.html" in archive.namelist()
    results = json.loads((work / "gradescope" / "autograder" / "results" / "results.json").read_text())
    assert results["score"] == 0 and "could not be graded" in results["output"]
    # Three publishes by the calendar: 01, then 01 and 02, then 01, 02 and 03.
    for line in ("release/ holds 01_numpy_mlp\n", "release/ holds 01_numpy_mlp, 02_autograd\n",
                 "release/ holds 01_numpy_mlp, 02_autograd, 03_custom_functions\n"):
        assert line in out
    # The hostile download: the four placed, each of the seven bad members named.
    assert "4 notebook(s) of 03_custom_functions placed" in out and "7 file(s) not placed" in out
    assert sorted(p.name for p in (work / "submitted").iterdir()) == [
        "1001", "1002", "1003", "1004", "lms.csv"]
    # The existing gradebook: its other columns are not in the import, so Canvas keeps them;
    # the students without a grade (bad uploads, the broken notebook) get an empty cell.
    canvas = list(csv.reader(open(grades / "export-canvas.csv", newline="")))
    assert canvas[0] == ["Student", "ID", "SIS User ID", "SIS Login ID", "Section",
                         f"{ASSIGNMENT} (4242)"]
    assert canvas[1] == ["Points Possible", "", "", "", "", full]
    cells = {row[1]: row[5] for row in canvas[2:]}
    assert cells == {"1001": full, "1002": graded["1002"]["score"], "1003": f"{FULL - penalty:g}",
                     "1004": "", "1005": "", "1006": "", "1007": ""}
    assert {row[1]: row[0] for row in canvas[2:]}["1004"].startswith("'=HYPERLINK(")
    feedback = rows(grades / "returned" / "feedback.csv")
    assert (feedback["1001"]["name"], feedback["1001"]["email"]) == ("Ada Lovelace", "u1001@uni.edu")
    # Nothing of the grading folder reached the student repository.
    published = {p.relative_to(work / "student-repository").parts[0]
                 for p in (work / "student-repository").rglob("*") if p.is_file()}
    assert published == {".autograder-publish.json", "LICENSE", "README.md", "notebooks", "release"}


@pytest.mark.parametrize("args, message", [
    (["-a", "99_nope"], "no assignment 99_nope"),
    (["--keep", str(REPO_ROOT)], "exists; name a folder that does not"),
])
def test_the_rehearsal_refuses_what_it_cannot_do_before_doing_anything(args, message):
    done = subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(REPO_ROOT)}, timeout=300)
    assert done.returncode == 2 and message in done.stderr


@pytest.mark.slow
def test_a_term_of_120_on_canvas(rehearsal):
    """What canvas-lms gives an instructor of 120 (scripts/canvas_term.py): the Submissions API in
    two pages, a gradebook export with a Manual Posting row, a due date of 23:59 at -05:00 in
    America/New_York, four extensions, a file named as another student's. Every number below is
    worked out by hand from the class the script describes (00_fixture: 6 points)."""
    work, out = rehearsal
    grades = work / "term-grades"
    assert [len(json.loads(p.read_text())) for p in sorted((work / "canvas-term" / "times").iterdir())] == [100, 21]
    assert "114 notebook(s) of 00_fixture placed" in out and "(114 with a submission time)" in out
    assert "4 student(s) with their own due date in Canvas" in out
    graded = rows(grades / "grades.csv")
    assert len(graded) == 114 and [r["status"] for r in graded.values()].count("error") == 1
    canvas = list(csv.reader(open(grades / "export-canvas.csv", newline="")))
    assert canvas[0][-1] == "HW - Term rehearsal (5501)" and len(canvas) == 3 + 121
    assert canvas[1] == ["", "", "", "", "", "Manual Posting"]
    assert canvas[2] == ["Points Possible", "", "", "", "", "6"]
    cells = {row[1]: row[-1] for row in canvas[3:]}
    # 1 to 6 started days late: 10 % of 6 a day, at most 50 %.
    assert [cells[str(318100 + k)] for k in range(9, 15)] == ["5.4", "4.8", "4.2", "3.6", "3", "3"]
    # Extended by 3 days: on time by their own date, but the last, 2 hours past it.
    assert [cells[str(318100 + k)] for k in range(15, 19)] == ["6", "6", "6", "5.4"]
    # Nothing handed in, a notebook that is not JSON, Canvas's test student: left empty.
    assert [cells[str(u)] for u in (318103, 318108, 318102, 318999)] == ["", "", "", ""]
    assert cells["777"] == "6" and rows(work / "term-submitted" / "lms.csv")["777"]["file_id"] == "87770"
    # Full marks: all but the 7 wrong answers (one the hostile name's), the broken one, the 6 who
    # handed in nothing, the 6 late and the one late past an extension.
    assert sum(v == "6" for v in cells.values()) == 120 - 7 - 1 - 6 - 6 - 1
    feedback = rows(grades / "returned" / "feedback.csv")
    assert {s: r["total"] for s, r in feedback.items()} == {s: cells[s] for s in feedback}
    with zipfile.ZipFile(grades / "returned" / "318126_feedback.zip") as archive:
        index = archive.read("index.html").decode()
    assert "<td>2026-11-09 21:04 EST</td><td>2026-11-09 23:59 EST</td>" in index
    with zipfile.ZipFile(grades / "returned" / "318115_feedback.zip") as archive:
        index = archive.read("index.html").decode()
    assert "<td>2026-11-12 23:59 EST</td>" in index and "your due date is your own" in index
