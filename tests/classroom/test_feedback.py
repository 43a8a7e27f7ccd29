"""Feedback a student can keep: self-contained HTML, cells named, no paths or keys; one zip each.

The slow tests grade two submissions of the fixture course for real (the feedback HTML is what
nbgrader writes, then autograder/engine/feedback_html.py) and pack them with `feedback`.
"""

from __future__ import annotations

import copy
import csv
import json
import shutil
import zipfile

import nbformat
import pytest

from autograder.__main__ import main
from autograder.batch.grade import CSV_COLUMNS, grade
from autograder.classroom.feedback import canvas_name, make_pages
from autograder.classroom.lms_manifest import LmsRecord, manifest_text
from autograder.classroom.results import read_results
from autograder.course.notebooks import grade_id, read_notebook
from autograder.engine.feedback_html import finish, scrub_text

A = "00_fixture"
PYPROJECT = f"""
[tool.course]
late_penalty_per_day = 0.1
late_penalty_cap = 0.5

[tool.course.due]
"{A}" = "2026-12-01T23:59:00+00:00"
"""


@pytest.mark.parametrize("text, expected", [
    ("File /work/main/helpers/checks.py:45, in check_close", "File checks.py:45, in check_close"),
    ("Cell In[3], line 2 (/tmp/ipykernel_812/2740.py)", "Cell In[3], line 2 (2740.py)"),
    ("ValueError: /srv/course/build/work/grade-x1/jobs/job-00_fixture-abc",
     "ValueError: job-00_fixture-abc"),
    ("see https://pytorch.org/docs/stable/notes.html", "see https://pytorch.org/docs/stable/notes.html"),
    ("x / 2 + a/b/c and 3/4/5", "x / 2 + a/b/c and 3/4/5"),
    ("grade_id cell-4f2a9b1c and __autograder_probe", "grade_id (internal) and (internal)"),
])
def test_scrub_text_drops_machine_paths_and_internal_keys_only(text, expected):
    assert scrub_text(text) == expected


@pytest.fixture(scope="module")
def graded(released_course, tmp_path_factory):
    """ada: every answer right, handed in late; bob: scale wrong (a check in helpers fails) and
    mean_square raising an error that quotes the kernel's working folder."""
    source = read_notebook(released_course.source_notebook(A))
    root = tmp_path_factory.mktemp("submitted")
    bob = copy.deepcopy(read_notebook(released_course.release_notebook(A)))
    for cell in bob.cells:
        if grade_id(cell) == "scale":
            cell.source = "def scale(x, factor):\n    return x + factor"
        if grade_id(cell) == "mean_square":
            cell.source = "import os\n\n\ndef mean_square(x):\n    raise ValueError(os.getcwd())"
    for who, nb in (("ada", source), ("bob", bob)):
        (root / who / A).mkdir(parents=True)
        nbformat.write(nb, root / who / A / f"{A}.ipynb")
    (root / "ada" / A / "timestamp.txt").write_text("2026-12-03 10:30:00.000000 UTC\n")
    out = tmp_path_factory.mktemp("grades")
    rows = grade(released_course, root, out, n_jobs=2)
    assert [(r["student_id"], r["score"]) for r in rows] == [("ada", "6"), ("bob", "0")]
    assert make_pages(out, released_course, read_results(out, released_course)[0]) == []  # as `feedback` does
    return out, released_course


def pages(out):
    return {who: (out / "feedback" / who / A / f"{A}.html").read_text() for who in ("ada", "bob")}


def test_feedback_loads_nothing_from_elsewhere(graded):
    out, _ = graded
    for html in pages(out).values():
        assert "<script" not in html and "mathjax" not in html.lower()
        assert "<link" not in html and "cdnjs" not in html


def test_feedback_names_each_test_by_what_it_checks_not_by_its_key(graded):
    out, _ = graded
    html = pages(out)["bob"]
    for title in ("scale multiplies every element by the factor.",
                  "Hidden: scale keeps the sign of a negative factor and works on 2-D arrays.",
                  "mean_square averages the squares.", "Your answer: scale"):
        assert title in html
    for key in ("test_scale", "test_mean_square", "cell-id=", "Test cell", "Grade cell"):
        assert key not in html
    assert "add the factor" in html or "multiply by the factor" in html  # the check's message stays


def test_feedback_shows_no_path_of_the_grading_machine(graded):
    out, course = graded
    html = pages(out)["bob"]
    # The kernel's working folder (the job's, under the course's build/) shrinks to its name.
    assert "ValueError: 00_fixture" in html
    for path in (str(course.root), str(out), "/tmp/", "/work/", "ipykernel_"):
        assert path not in html
    # helpers' own frames are hidden from a failed check's traceback (__tracebackhide__): only the
    # student's line and the message remain.
    assert "helpers/checks.py" not in html and "site-packages" not in html


def test_finishing_twice_changes_nothing(graded):
    out, course = graded
    page = out / "feedback" / "ada" / A / f"{A}.html"
    before = page.read_bytes()
    finish(page, course.source_notebook(A))
    assert page.read_bytes() == before


def test_feedback_archives_one_zip_per_student_with_scores_and_penalties(graded, fixture_course,
                                                                          tmp_path, capsys):
    out, _ = graded
    (fixture_course.root / "pyproject.toml").write_text(PYPROJECT)
    returned = tmp_path / "returned"
    assert main(["feedback", str(out), "--out", str(returned), "--root", str(fixture_course.root)]) == 0
    assert sorted(p.name for p in returned.iterdir()) == [
        "ada_feedback.zip", "bob_feedback.zip", "feedback.csv"]
    with zipfile.ZipFile(returned / "ada_feedback.zip") as archive:
        assert sorted(archive.namelist()) == [f"{A}.html", "index.html"]
        index = archive.read("index.html").decode()
        page = archive.read(f"{A}.html").decode()
    # 1 day 10 h 31 min late: 2 started days, 10 % of 6 each.
    for text in ("2026-12-03 10:30 UTC", "2026-12-01 23:59 UTC", "-1.2", "<b>4.8</b>",
                 "loses 10% of the", "points per started day after the due date, at most 50%"):
        assert text in index
    assert "<script" not in page and "scale multiplies every element" in page
    with open(returned / "feedback.csv", newline="") as f:
        assert list(csv.DictReader(f)) == [
            {"student_id": "ada", "name": "", "email": "", "file": "ada_feedback.zip", "total": "4.8",
             "max_total": "6"},
            {"student_id": "bob", "name": "", "email": "", "file": "bob_feedback.zip", "total": "0",
             "max_total": "6"}]
    assert "2 archive(s)" in capsys.readouterr().out


def grades_csv(folder, rows: list[dict]) -> None:
    """grades.csv as grade writes it (its CSV_COLUMNS), without the executed notebooks: the index
    pages and feedback.csv are made all the same (each missing page is said on stderr)."""
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / "grades.csv", "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=CSV_COLUMNS)
        writer.writeheader()
        for row in rows:
            full = {"assignment": A, "score": "6", "max_score": "6", "status": "graded",
                    "reason": "", "warnings": "", "submitted_at": "", "due_at": "", **row}
            writer.writerow({k: v for k, v in full.items() if k in CSV_COLUMNS})


@pytest.mark.parametrize("zone, submitted, due", [
    ("", "2026-12-03 05:30 UTC-05:00", "2026-12-03 09:00 UTC-05:00"),  # the calendar's offset
    ('timezone = "America/Chicago"', "2026-12-03 04:30 CST", "2026-12-03 08:00 CST"),
])
def test_feedback_shows_every_time_in_the_courses_zone_with_its_name(fixture_course, tmp_path,
                                                                      zone, submitted, due):
    """Due 09:00-05:00, ada handed in at 10:30 UTC (05:30 there): on time. Before, the page read
    "2026-12-03 10:30 UTC" beside a due date of "2026-12-03 09:00 UTC", the wall time of another
    zone named UTC."""
    (fixture_course.root / "pyproject.toml").write_text(
        PYPROJECT.replace("2026-12-01T23:59:00+00:00", "2026-12-03T09:00:00-05:00")
        .replace("[tool.course]\n", f"[tool.course]\n{zone}\n"))
    grades_csv(tmp_path / "grades", [{"student_id": "ada", "submitted_at": "2026-12-03T10:30:00+00:00"}])
    assert main(["feedback", str(tmp_path / "grades"), "--root", str(fixture_course.root)]) == 0
    with zipfile.ZipFile(tmp_path / "grades" / "returned" / "ada_feedback.zip") as archive:
        index = archive.read("index.html").decode()
    assert f"<td>{submitted}</td><td>{due}</td>" in index and "<b>6</b>" in index
    assert "UTC</td>" not in index
    assert f"Times are in {zone.split('= ')[-1].strip(chr(34)) or 'UTC-05:00'}" in index


def test_feedback_csv_and_the_canvas_import_agree_on_what_was_not_graded(fixture_course, tmp_path):
    """One rule for a submission that could not be graded (cy: not a notebook) and a student with
    an extension (dee: Canvas's cached_due_date, in grades.csv's due_at): feedback.csv's total is
    what the Canvas import writes. Before, cy's total was 0 beside an empty Canvas cell."""
    (fixture_course.root / "pyproject.toml").write_text(PYPROJECT)
    grades = tmp_path / "grades"
    late = "2026-12-03T10:30:00+00:00"  # 2 started days: -1.2
    grades_csv(grades, [{"student_id": "ada", "submitted_at": late},
                        {"student_id": "bob", "score": "0"},
                        {"student_id": "cy", "score": "0", "status": "error", "reason": "not JSON"},
                        {"student_id": "dee", "submitted_at": late,
                         "due_at": "2026-12-05T23:59:00+00:00"}])
    (tmp_path / "gradebook.csv").write_text(
        "Student,ID,SIS Login ID,Section,00_fixture (4242)\n    Points Possible,,,,6.00\n"
        + "".join(f'"{who}, A",{who},{who}@uni.edu,L,\n' for who in ("ada", "bob", "cy", "dee")))
    assert main(["export", str(grades), "--to", "canvas", "--roster", str(tmp_path / "gradebook.csv"),
                 "--root", str(fixture_course.root)]) == 0
    assert main(["feedback", str(grades), "--root", str(fixture_course.root)]) == 0
    with open(grades / "export-canvas.csv", newline="") as f:
        imported = {row[1]: row[-1] for row in list(csv.reader(f))[2:]}
    with open(grades / "returned" / "feedback.csv", newline="") as f:
        totals = {r["student_id"]: r["total"] for r in csv.DictReader(f)}
    assert imported == totals == {"ada": "4.8", "bob": "0", "cy": "", "dee": "6"}
    with zipfile.ZipFile(grades / "returned" / "dee_feedback.zip") as archive:
        index = archive.read("index.html").decode()
    assert "2026-12-05 23:59 UTC" in index and "your due date is your own" in index


def canvas_reads(filename: str) -> tuple[str, str]:
    """(user id, file id) as canvas-lms's Assignment#infer_comment_context_from_filename reads a
    re-uploaded file's name: the first two all-digit parts between underscores."""
    user, file_id = [part for part in filename.split("_") if part.isdigit()][:2]
    return user, file_id


@pytest.mark.parametrize("name", ["doejane", "o_brien", "x_2024_y", "", "123"])
def test_canvas_names_lead_with_the_user_and_file_ids(name):
    record = LmsRecord("s", A, "canvas", name=name, user_id="1001", file_id="7001")
    filename = canvas_name(record, "01_numpy_mlp")
    assert canvas_reads(filename) == ("1001", "7001")
    assert filename.endswith("_01_numpy_mlp_feedback.html")


def test_feedback_for_canvas_reupload_and_a_mail_merge(graded, fixture_course, tmp_path, capsys):
    out, _ = graded
    (fixture_course.root / "pyproject.toml").write_text(PYPROJECT)
    submitted = tmp_path / "submitted"
    submitted.mkdir()
    (submitted / "lms.csv").write_text(manifest_text({
        ("ada", A): LmsRecord("ada", A, "canvas", name="lovelaceada", user_id="1001", file_id="7001",
                              submission_id="501", late="late"),
        ("bob", A): LmsRecord("bob", A, "gradescope", name="Bob Byte", email="bob@uni.edu",
                              submission_id="9002")}))
    returned = tmp_path / "returned"
    assert main(["feedback", str(out), "--out", str(returned), "--submitted", str(submitted),
                 "--root", str(fixture_course.root)]) == 0
    with zipfile.ZipFile(returned / "canvas" / f"{A}.zip") as archive:
        (name,) = archive.namelist()  # bob came from Gradescope: its autograder shows his feedback
        page = archive.read(name).decode()
    assert name == f"lovelaceada_1001_7001_{A}_feedback.html" and canvas_reads(name) == ("1001", "7001")
    # One page: the scores with the late penalty on top, then the feedback itself.
    assert page.index("<b>4.8</b>") < page.index("scale multiplies every element")
    assert "-1.2" in page and "<script" not in page and f'href="{A}.html"' not in page
    with open(returned / "feedback.csv", newline="") as f:
        rows = {r["student_id"]: r for r in csv.DictReader(f)}
    assert (rows["bob"]["name"], rows["bob"]["email"]) == ("Bob Byte", "bob@uni.edu")
    assert rows["ada"]["name"] == "lovelaceada" and rows["ada"]["file"] == "ada_feedback.zip"
    assert "Re-upload Submissions" in capsys.readouterr().out


def test_feedback_without_the_manifest_it_was_pointed_at_writes_nothing(graded, fixture_course,
                                                                        tmp_path, capsys):
    out, _ = graded
    returned = tmp_path / "returned"
    assert main(["feedback", str(out), "--out", str(returned), "--submitted", str(tmp_path / "nope"),
                 "--root", str(fixture_course.root)]) == 2
    assert "no lms.csv there" in capsys.readouterr().err
    assert not returned.exists()


@pytest.mark.parametrize("lms, roster, name, email", [
    ("canvas", 'Student,ID,SIS User ID,SIS Login ID\n"Lovelace, Ada",ada,S1,ada@uni.edu\n'
               '"=cmd|\' /C calc\'!A0",bob,S2,bbyte\n', "Ada Lovelace", "ada@uni.edu"),
    ("gradescope", "First Name,Last Name,SID,Email\nAda,Lovelace,ada,ada@uni.edu\n"
                   "=cmd|' /C calc'!A0,,bob,@SUM(1+1)\n", "Ada Lovelace", "ada@uni.edu"),
])
def test_feedback_takes_names_and_emails_from_the_roster_and_titles_pages_by_name(
        graded, fixture_course, tmp_path, lms, roster, name, email):
    """feedback.csv had an empty email column and the Canvas login as the name; the pages named
    the student by Canvas id; a roster name such as `=cmd|...` went into feedback.csv as is."""
    out, _ = graded
    (fixture_course.root / "pyproject.toml").write_text(PYPROJECT)
    (tmp_path / "roster.csv").write_text(roster)
    returned = tmp_path / "returned"
    assert main(["feedback", str(out), "--out", str(returned), "--roster", str(tmp_path / "roster.csv"),
                 "--lms", lms, "--root", str(fixture_course.root)]) == 0
    with open(returned / "feedback.csv", newline="") as f:
        rows = {r["student_id"]: r for r in csv.DictReader(f)}
    assert (rows["ada"]["name"], rows["ada"]["email"]) == (name, email)
    assert rows["bob"]["name"].startswith("'=cmd")
    assert rows["bob"]["email"] in ("", "'@SUM(1+1)")
    with zipfile.ZipFile(returned / "ada_feedback.zip") as archive:
        index = archive.read("index.html").decode()
    assert f"<title>Feedback for {name} (ada)</title>" in index
    assert f"<h1>Feedback for {name} (ada)</h1>" in index


def test_a_page_that_cannot_be_made_is_reported_and_the_others_are_made(graded, tmp_path):
    """Four pages to make (more than are made in-process: the workers' path): ada's work handed in
    again as cy and dee, dee's executed notebook broken. Dee's page is reported, the rest made."""
    out, course = graded
    grades = tmp_path / "grades"
    shutil.copytree(out, grades, ignore=shutil.ignore_patterns("feedback"))
    with open(grades / "grades.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    records = json.loads((grades / "grades.json").read_text())
    for who in ("cy", "dee"):
        rows.append(dict(rows[0], student_id=who))
        records.append(dict(records[0], student_id=who))
        shutil.copytree(grades / "autograded" / "ada", grades / "autograded" / who)
    (grades / "autograded" / "dee" / A / f"{A}.ipynb").write_text('{"cells": [')
    with open(grades / "grades.csv", "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    (grades / "grades.json").write_text(json.dumps(records))
    problems = make_pages(grades, course, read_results(grades, course)[0], jobs=2, warn=lambda line: None)
    assert [p.split(":")[0] for p in problems] == [f"dee/{A}"], problems
    assert sorted(p.parent.parent.name for p in (grades / "feedback").rglob("*.html")) == ["ada", "bob", "cy"]
    assert "Your answer: scale" in (grades / "feedback" / "cy" / A / f"{A}.html").read_text()
    assert make_pages(grades, course, read_results(grades, course)[0], jobs=2, warn=lambda line: None) == problems
