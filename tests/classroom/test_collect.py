"""`python -m autograder collect`: Canvas, Gradescope and plain zips laid out as SUBMITTED/.

The downloads are built here in the shapes each LMS documents (file names, folders, metadata);
tests/fixtures/lms/ holds Gradescope's metadata file. No notebook is executed.
"""

from __future__ import annotations

import csv
import json
import re
import shutil
import zipfile
from pathlib import Path, PurePosixPath

import nbformat
import pytest

from autograder.__main__ import main
from autograder.classroom.collect import Candidate, Collected, Entry, names_assignment, place
from autograder.course.layout import CourseError
from autograder.course.submitted import collect as find_submissions

LMS = Path(__file__).parents[1] / "fixtures" / "lms"
A = "00_fixture"


def notebook(tag: str) -> bytes:
    """A small valid notebook whose one cell says `tag` (to tell the copies apart)."""
    nb = nbformat.v4.new_notebook()
    nb.cells.append(nbformat.v4.new_code_cell(f"# {tag}", id="only-cell"))
    return nbformat.writes(nb).encode()


def make_zip(path: Path, files: dict[str, bytes]) -> Path:
    with zipfile.ZipFile(path, "w") as archive:
        for name, data in files.items():
            archive.writestr(name, data)
    return path


def run(fixture_course, *args) -> int:
    return main([*map(str, args), "--root", str(fixture_course.root)])


def placed(submitted: Path) -> dict[str, bytes]:
    """The files collect laid out for students (lms.csv, its manifest, left out)."""
    return {str(p.relative_to(submitted)): p.read_bytes()
            for p in sorted(submitted.rglob("*")) if p.is_file() and p.name != "lms.csv"}


def manifest(submitted: Path) -> dict[str, dict[str, str]]:
    """SUBMITTED/lms.csv's rows by student (one assignment per test)."""
    with open(submitted / "lms.csv", newline="") as f:
        return {row["student_id"]: row for row in csv.DictReader(f)}


def test_canvas_download_is_laid_out_by_canvas_user_id(fixture_course, tmp_path, capsys):
    download = make_zip(tmp_path / "submissions.zip", {
        f"doejane_1001_5001_{A}.ipynb": notebook("jane"),
        f"smithbob_LATE_1002_5002_{A}.ipynb": notebook("bob first"),
        f"smithbob_LATE_1002_5002_{A}-1.ipynb": notebook("bob again"),  # Canvas numbers a re-upload
        f"leecarl_late_1003_5003_Copy of {A} (1).ipynb": notebook("carl"),  # Colab's name
        "leecarl_late_1003_5003_notes.pdf": b"%PDF",
        "readme.txt": b"not from Canvas",
        f"__MACOSX/._doejane_1001_5001_{A}.ipynb": b"junk",
    })
    out = tmp_path / "submitted"
    assert run(fixture_course, "collect", download, "--from", "canvas", "-a", A, "--out", out) == 0
    assert placed(out) == {f"1001/{A}/{A}.ipynb": notebook("jane"),
                           f"1002/{A}/{A}.ipynb": notebook("bob again"),
                           f"1003/{A}/{A}.ipynb": notebook("carl")}
    output = capsys.readouterr()
    assert "3 notebook(s) of 00_fixture placed" in output.out
    assert {s: (r["user_id"], r["file_id"], r["late"]) for s, r in manifest(out).items()} == {
        "1001": ("1001", "5001", ""), "1002": ("1002", "5002", "late"), "1003": ("1003", "5003", "late")}
    assert "marked late by Canvas: 1002, 1003" in output.out
    assert f"smithbob_LATE_1002_5002_{A}.ipynb: 1002: a second notebook; kept the newer" in output.err
    assert "leecarl_late_1003_5003_notes.pdf: user 1003 (leecarl): not a notebook" in output.err
    assert "readme.txt: not a Canvas download name" in output.err
    assert f"__MACOSX/._doejane_1001_5001_{A}.ipynb: a macOS resource fork" in output.err


def test_gradescope_export_keeps_times_and_every_group_member(fixture_course, tmp_path, capsys):
    export = tmp_path / "assignment_77_export"
    export.mkdir()
    shutil.copy(LMS / "submission_metadata.yml", export)
    for folder, name, tag in (("submission_9001", f"{A}.ipynb", "ada"),
                              ("submission_9002", f"Copy of {A}.ipynb", "grace"),
                              ("submission_9003", "homework.ipynb", "pair"),
                              ("submission_9999", f"{A}.ipynb", "ghost")):
        (export / folder).mkdir()
        (export / folder / name).write_bytes(notebook(tag))
    (export / "submission_9002" / "data.csv").write_text("x\n")
    out = tmp_path / "submitted"
    assert run(fixture_course, "collect", tmp_path, "--from", "gradescope", "-a", A, "--out", out) == 0
    files = placed(out)
    assert files[f"A100/{A}/{A}.ipynb"] == notebook("ada")
    assert files[f"A200/{A}/{A}.ipynb"] == notebook("grace")
    # A group submission: each member gets it; one without an SID is known by email.
    assert files[f"alan@uni.edu/{A}/{A}.ipynb"] == files[f"A400/{A}/{A}.ipynb"] == notebook("pair")
    # nbgrader's timestamp.txt, in UTC: 09:03 at -08:00 is 17:03 UTC.
    assert files[f"A100/{A}/timestamp.txt"] == b"2026-11-20 17:03:00.000000 UTC\n"
    assert files[f"A200/{A}/timestamp.txt"] == b"2026-12-03 10:30:00.000000 UTC\n"
    err = capsys.readouterr().err
    assert "submission_9002/data.csv: submission_9002: not a notebook" in err
    assert "submission_9999/00_fixture.ipynb: not inside a submission folder listed in" in err
    # grade reads the time back into grades.csv's submitted_at.
    (ada,) = [s for s in find_submissions(out, [A]) if s.student_id == "A100"]
    assert ada.submitted_at == "2026-11-20T17:03:00+00:00"


def test_plain_zip_accepts_the_three_documented_shapes(fixture_course, tmp_path, capsys):
    download = make_zip(tmp_path / "class.zip", {
        "alice/my work.ipynb": notebook("alice"),
        f"bob/{A}/Copy of {A}.ipynb": notebook("bob"),
        f"bob/{A}/timestamp.txt": b"2026-11-29 08:00:00.000000 UTC",
        f"carol_{A}.ipynb": notebook("carol"),
        f"dan_Copy of {A} (2).ipynb": notebook("dan"),
        "erin_homework.ipynb": notebook("erin"),
        "frank/notes.txt": b"no notebook",
        "gina/a/b/deep.ipynb": notebook("gina"),
    })
    out = tmp_path / "submitted"
    assert run(fixture_course, "collect", download, "--from", "zip", "-a", A, "--out", out) == 0
    files = placed(out)
    assert {k for k in files if k.endswith(".ipynb")} == {
        f"{s}/{A}/{A}.ipynb" for s in ("alice", "bob", "carol", "dan")}
    assert files[f"carol/{A}/{A}.ipynb"] == notebook("carol")
    assert files[f"bob/{A}/timestamp.txt"] == b"2026-11-29 08:00:00.000000 UTC\n"
    err = capsys.readouterr().err
    assert f"erin_homework.ipynb: a notebook at the top must be named <student>_{A}.ipynb" in err
    assert "frank/notes.txt: not a notebook" in err
    assert "gina/a/b/deep.ipynb: expected <student>/" in err


def test_an_existing_submission_stops_the_command_unless_replace(fixture_course, tmp_path, capsys):
    out = tmp_path / "submitted"
    first = make_zip(tmp_path / "first.zip", {f"alice/{A}.ipynb": notebook("v1"),
                                              f"bob/{A}.ipynb": notebook("bob v1")})
    assert run(fixture_course, "collect", first, "--from", "zip", "-a", A, "--out", out) == 0
    before = placed(out)
    second = make_zip(tmp_path / "second.zip", {f"alice/{A}.ipynb": notebook("v2"),
                                                f"zoe/{A}.ipynb": notebook("zoe")})
    assert run(fixture_course, "collect", second, "--from", "zip", "-a", A, "--out", out) == 2
    assert "already holds 00_fixture for 1 student(s) (alice); nothing was written" in capsys.readouterr().err
    assert placed(out) == before  # zoe was not added either
    assert run(fixture_course, "collect", second, "--from", "zip", "-a", A, "--out", out,
               "--replace") == 0
    after = placed(out)
    assert after[f"alice/{A}/{A}.ipynb"] == notebook("v2")
    assert after[f"zoe/{A}/{A}.ipynb"] == notebook("zoe")
    assert after[f"bob/{A}/{A}.ipynb"] == notebook("bob v1")
    assert not [p for p in out.iterdir() if p.name.startswith(".collect-")]


def test_a_failure_while_staging_writes_nothing(tmp_path):
    def broken() -> bytes:
        raise OSError("disk full")

    found = Collected(placed={
        "alice": Candidate("alice", Entry(Path("a.ipynb"), lambda: notebook("a")), True),
        "bob": Candidate("bob", Entry(Path("b.ipynb"), broken), True)})
    out = tmp_path / "submitted"
    with pytest.raises(OSError):
        place(found, A, out)
    assert list(out.iterdir()) == []


def test_an_assignment_not_in_source_is_refused(fixture_course, tmp_path, capsys):
    download = make_zip(tmp_path / "d.zip", {"alice/x.ipynb": notebook("a")})
    out = tmp_path / "submitted"
    assert run(fixture_course, "collect", download, "--from", "zip", "-a", "99_nope", "--out", out) == 2
    assert "no assignment 99_nope" in capsys.readouterr().err
    assert not out.exists()


def test_a_gradescope_download_without_its_metadata_is_refused(fixture_course, tmp_path, capsys):
    download = make_zip(tmp_path / "d.zip", {f"submission_1/{A}.ipynb": notebook("a")})
    assert run(fixture_course, "collect", download, "--from", "gradescope", "-a", A,
               "--out", tmp_path / "s") == 2
    assert "holds one submission_metadata.yml; this one has 0" in capsys.readouterr().err


@pytest.mark.parametrize("name, copy", [
    (f"{A}.ipynb", 0), (f"Copy of {A}.ipynb", 0), (f"Copy of Copy of {A}.ipynb", 0),
    (f"{A} (2).ipynb", 2), (f"Copy of {A} (1).ipynb", 1), (f"{A}-3.ipynb", 3),
    (f"Copy_of_{A}.ipynb", 0), (f"copy of {A}.ipynb", 0),
    ("homework.ipynb", None), ("01_other.ipynb", None), (f"{A}_old.ipynb", None),
])
def test_names_assignment_sees_through_colab_canvas_and_browser_renames(name, copy):
    assert names_assignment(name, A) == copy


@pytest.mark.parametrize("name, parts", [
    ("doejane_1001_5001_00_fixture.ipynb", ("doejane", None, "1001", "5001", "00_fixture.ipynb")),
    ("doejane_LATE_1001_5001_Copy of x.ipynb", ("doejane", "LATE", "1001", "5001", "Copy of x.ipynb")),
    ("o_brien_late_7_8_hw_1.ipynb", ("o_brien", "late", "7", "8", "hw_1.ipynb")),
    ("doejane_1001_text.html", None),  # a text entry: no file id, no file
])
def test_canvas_names_are_read_as_canvas_writes_them(name, parts):
    from autograder.classroom.collect import CANVAS_NAME

    match = CANVAS_NAME.match(name)
    assert (match.group("name", "late", "user", "file_id", "file") if match else None) == parts


def test_a_download_that_is_no_zip_is_refused(tmp_path):
    from autograder.classroom.collect import read_download

    (tmp_path / "x.zip").write_text("not a zip")
    with pytest.raises(CourseError, match="neither a folder nor a zip"):
        read_download(tmp_path / "x.zip")


# -- Canvas: times from its Submissions API, what the LMS said in lms.csv -------------------------

def canvas_download(tmp_path: Path) -> Path:
    """A download named as canvas-lms's ContentZipper named it before the marker stayed `LATE`
    (lib/content_zipper.rb): the prefix downcased (`late`), then the uploaded file's id and name."""
    return make_zip(tmp_path / "submissions.zip", {
        f"doejane_1001_7001_{A}.ipynb": notebook("jane"),
        f"smithbob_late_1002_7002_Copy of {A}.ipynb": notebook("bob"),
    })


def api_list(**changes) -> list[dict]:
    """Canvas's List assignment submissions answer for the download above (the fields it reads)."""
    records = [
        {"id": 501, "user_id": 1001, "assignment_id": 4242, "submitted_at": "2026-11-30T22:00:00Z",
         "late": False, "attachments": [{"id": 7001, "display_name": f"{A}.ipynb"}]},
        {"id": 502, "user_id": 1002, "assignment_id": 4242, "submitted_at": "2026-12-03T10:30:00Z",
         "late": True, "attachments": [{"id": 7002, "display_name": f"Copy of {A}.ipynb"}]},
        {"id": 503, "user_id": 1003, "assignment_id": 4242, "submitted_at": None,
         "workflow_state": "unsubmitted"},
    ]
    for user, fields in changes.items():
        next(r for r in records if str(r["user_id"]) == user.removeprefix("u")).update(fields)
    return records


def test_canvas_times_from_the_submissions_api_become_timestamp_txt(fixture_course, tmp_path, capsys):
    times = tmp_path / "submissions.json"
    times.write_text(json.dumps(api_list()))
    out = tmp_path / "submitted"
    assert run(fixture_course, "collect", canvas_download(tmp_path), "--from", "canvas", "-a", A,
               "--out", out, "--times", times) == 0
    files = placed(out)
    assert files[f"1001/{A}/timestamp.txt"] == b"2026-11-30 22:00:00.000000 UTC\n"
    assert files[f"1002/{A}/timestamp.txt"] == b"2026-12-03 10:30:00.000000 UTC\n"
    assert "(2 with a submission time)" in capsys.readouterr().out
    rows = manifest(out)
    assert rows["1002"] == {"student_id": "1002", "assignment": A, "lms": "canvas", "name": "smithbob",
                            "email": "", "user_id": "1002", "submission_id": "502", "file_id": "7002",
                            "file": f"smithbob_late_1002_7002_Copy of {A}.ipynb",
                            "submitted_at": "2026-12-03T10:30:00+00:00", "late": "late", "due_at": ""}
    # grade reads the time back, so export and feedback can apply the late penalty.
    (bob,) = [s for s in find_submissions(out, [A]) if s.student_id == "1002"]
    assert bob.submitted_at == "2026-12-03T10:30:00+00:00"


def test_canvas_without_times_says_why_there_is_none(fixture_course, tmp_path, capsys):
    out = tmp_path / "submitted"
    assert run(fixture_course, "collect", canvas_download(tmp_path), "--from", "canvas", "-a", A,
               "--out", out) == 0
    assert not [k for k in placed(out) if k.endswith("timestamp.txt")]
    assert "carries no submission time" in capsys.readouterr().out
    assert manifest(out)["1001"]["file_id"] == "7001" and manifest(out)["1001"]["submitted_at"] == ""


@pytest.mark.parametrize("content, message", [
    ("{not json", "submissions.json: not JSON"),
    (json.dumps({"user_id": 1001}), "expected a JSON list of Canvas Submission objects"),
    (json.dumps([{"id": 1}]), "submissions.json item 1: user_id = None is not a Canvas user id"),
    (json.dumps(api_list(u1002={"submitted_at": "3 Dec 2026"})),
     "submissions.json item 2 (user 1002): submitted_at = '3 Dec 2026' is not an ISO 8601 time"),
    (json.dumps(api_list() + [{**api_list()[0], "submitted_at": "2026-12-01T00:00:00Z"}]),
     "submissions.json item 1 and .*submissions.json item 4: user 1001 twice, differently"),
    (json.dumps(api_list(u1002={"assignment_id": 99})), "submissions of 2 assignments"),
    (json.dumps(api_list()[:1]), "no submission of Canvas user 1002"),
    (json.dumps(api_list(u1002={"submitted_at": None})), "item 2 (user 1002): submitted_at is empty"),
    (json.dumps(api_list(u1002={"cached_due_date": "next week"})),
     "item 2 (user 1002): cached_due_date = 'next week' is not an ISO 8601 time"),
    (json.dumps(api_list(u1002={"attachments": [{"id": 7001}]})),
     "item 2: Canvas file 7001 is listed for users 1001 and 1002"),
])
def test_bad_canvas_times_name_the_item_and_field_and_write_nothing(fixture_course, tmp_path, capsys,
                                                                      content, message):
    times = tmp_path / "submissions.json"
    times.write_text(content)
    out = tmp_path / "submitted"
    assert run(fixture_course, "collect", canvas_download(tmp_path), "--from", "canvas", "-a", A,
               "--out", out, "--times", times) == 2
    assert re.search(message if ".*" in message else re.escape(message), capsys.readouterr().err)
    assert not out.exists()


def test_times_belong_to_canvas_only(fixture_course, tmp_path, capsys):
    download = make_zip(tmp_path / "d.zip", {f"alice/{A}.ipynb": notebook("a")})
    times = tmp_path / "t.json"
    times.write_text("[]")
    assert run(fixture_course, "collect", download, "--from", "zip", "-a", A, "--out",
               tmp_path / "s", "--times", times) == 2
    assert "--times is for --from canvas" in capsys.readouterr().err


# -- Canvas names read from the left, checked against the Submissions API (issue 37, finding 11) -----

@pytest.mark.parametrize("with_times", [False, True])
def test_a_students_own_file_name_never_places_it_as_another_student(fixture_course, tmp_path, capsys,
                                                                     with_times):
    """Bob (1002) hands in a file named like a Canvas entry of user 777, as its name and inside a
    folder (older Canvas kept a `/` of a file name; a zip a student made, once extracted): Ann's
    own submission (not named for the assignment) stays Ann's. Before, the file in the folder was
    placed as user 777 (file id 999999, the newest of "her" notebooks), replacing hers; with
    --times, the collect of the whole class stopped on it. A loose file named so (no download
    Canvas makes has one) is checked against --times: not one of 777's files, not placed."""
    hostile = "x_777_999999_201_555_mine.ipynb"
    files = {"leeann_777_7770_homework.ipynb": notebook("ann"),
             f"smithbob_LATE_1002_8002_{hostile}": notebook("bob, as a name"),
             f"smithbob_LATE_1002_8003_hw/{hostile}": notebook("bob, in a folder")}
    times = tmp_path / "submissions.json"
    times.write_text(json.dumps([
        {"id": 1, "user_id": 777, "submitted_at": "2026-11-30T22:00:00Z",
         "attachments": [{"id": 7770}]},
        {"id": 2, "user_id": 1002, "submitted_at": "2026-12-03T10:30:00Z", "late": True,
         "attachments": [{"id": 8002}, {"id": 8003}]},
    ]))
    if with_times:
        files[hostile] = notebook("bob, loose")
    out = tmp_path / "submitted"
    assert run(fixture_course, "collect", make_zip(tmp_path / "submissions.zip", files), "--from",
               "canvas", "-a", A, "--out", out, *(["--times", times] if with_times else [])) == 0
    assert placed(out)[f"777/{A}/{A}.ipynb"] == notebook("ann")
    assert sorted(p.name for p in out.iterdir()) == ["1002", "777", "lms.csv"]
    rows = manifest(out)
    assert (rows["777"]["file_id"], rows["1002"]["file_id"]) == ("7770", "8003")  # his newest
    if with_times:
        assert (f"not placed: {hostile}: Canvas file 999999 is not one of user 777's current files"
                in capsys.readouterr().err)


@pytest.mark.parametrize("path, parts", [
    ("smithbob_1002_8002_x_777_999999_201_555_mine.ipynb",
     ("smithbob", None, "1002", "8002", "x_777_999999_201_555_mine.ipynb")),
    ("smithbob_1002_8003_hw/x_777_999999_201_555_mine.ipynb",
     ("smithbob", None, "1002", "8003", "hw/x_777_999999_201_555_mine.ipynb")),
    ("submissions/doejane_LATE_1001_5001_hw.ipynb", ("doejane", "LATE", "1001", "5001", "hw.ipynb")),
    ("_1001_5001_hw.ipynb", ("", None, "1001", "5001", "hw.ipynb")),  # a name of no word character
    ("müllerjürgen_1001_5001_hw.ipynb", ("müllerjürgen", None, "1001", "5001", "hw.ipynb")),
    ("doe jane_1001_5001_hw.ipynb", None),  # Canvas strips every non-word character from the name
])
def test_canvas_paths_are_read_from_the_left(path, parts):
    from autograder.classroom.collect import canvas_name

    match = canvas_name(PurePosixPath(path))
    assert (match.group("name", "late", "user", "file_id", "file") if match else None) == parts


def test_an_anonymous_download_is_never_read_as_user_ids(fixture_course, tmp_path, capsys):
    """Canvas names the files of an assignment graded anonymously `anon_<anonymous id>_<file id>`:
    before, `anon_12345_7001_hw.ipynb` was placed as user 12345 (an anonymous id of digits) and
    `anon_ab3De_7002_x_777_999_mine.ipynb` as user 777."""
    download = make_zip(tmp_path / "d.zip", {
        f"anon_12345_7001_{A}.ipynb": notebook("a"),
        "LATE_anon_ab3De_7002_x_777_999_mine.ipynb": notebook("b"),
        f"doejane_1001_7003_{A}.ipynb": notebook("jane"),
    })
    out = tmp_path / "submitted"
    assert run(fixture_course, "collect", download, "--from", "canvas", "-a", A, "--out", out) == 0
    assert sorted(p.name for p in out.iterdir()) == ["1001", "lms.csv"]
    assert capsys.readouterr().err.count("named by Canvas's anonymous id") == 2


def test_a_file_the_api_gives_to_another_user_is_placed_for_nobody(fixture_course, tmp_path, capsys):
    download = make_zip(tmp_path / "d.zip", {
        f"doejane_1001_7001_{A}.ipynb": notebook("jane"),
        f"smithbob_1002_7001_{A}.ipynb": notebook("bob with jane's file id"),
        f"smithbob_1002_7002_{A}.ipynb": notebook("bob"),
    })
    times = tmp_path / "t.json"
    times.write_text(json.dumps(api_list()))
    out = tmp_path / "submitted"
    assert run(fixture_course, "collect", download, "--from", "canvas", "-a", A, "--out", out,
               "--times", times) == 0
    assert placed(out)[f"1002/{A}/{A}.ipynb"] == notebook("bob")
    assert ("its name says user 1002, but --times lists Canvas file 7001 as user 1001's upload"
            in capsys.readouterr().err)


def test_a_student_who_handed_in_again_after_the_download_is_named_not_placed(
        fixture_course, tmp_path, capsys):
    times = tmp_path / "t.json"
    times.write_text(json.dumps(api_list(u1002={"attachments": [{"id": 7999}]})))
    out = tmp_path / "submitted"
    assert run(fixture_course, "collect", canvas_download(tmp_path), "--from", "canvas", "-a", A,
               "--out", out, "--times", times) == 0
    assert sorted(p.name for p in out.iterdir()) == ["1001", "lms.csv"]
    assert ("Canvas file 7002 is not one of user 1002's current files by --times (7999): the "
            "student handed in again after the download" in capsys.readouterr().err)


# -- Canvas's Submissions API in pages (issue 39, item 1) -----------------------------------------

def test_the_times_may_be_a_folder_of_pages_or_several_files(fixture_course, tmp_path, capsys):
    first, second = api_list()[:1], api_list()[1:]
    pages = tmp_path / "times"
    pages.mkdir()
    (pages / "page-1.json").write_text(json.dumps(first))
    (pages / "page-2.json").write_text(json.dumps(second + first))  # a record seen twice: the same
    (pages / "headers.txt").write_text("Link: <...>; rel=\"next\"")  # not a page: passed over
    for times in ([pages], [pages / "page-1.json", pages / "page-2.json"]):
        out = tmp_path / f"submitted-{len(times)}"
        assert run(fixture_course, "collect", canvas_download(tmp_path), "--from", "canvas", "-a",
                   A, "--out", out, *[a for t in times for a in ("--times", t)]) == 0
        assert "(2 with a submission time)" in capsys.readouterr().out
        assert placed(out)[f"1002/{A}/timestamp.txt"] == b"2026-12-03 10:30:00.000000 UTC\n"


def test_a_user_missing_from_the_times_says_they_may_be_one_page_of_several(
        fixture_course, tmp_path, capsys):
    """The documented curl saved the first page only (100 of 121): the message says so. Before,
    it read 'no submission of Canvas user 1002 ... were both saved for the same assignment?'."""
    times = tmp_path / "submissions.json"
    times.write_text(json.dumps(api_list()[:1] + [
        {"id": 900 + n, "user_id": 5000 + n, "submitted_at": None} for n in range(99)]))
    assert run(fixture_course, "collect", canvas_download(tmp_path), "--from", "canvas", "-a", A,
               "--out", tmp_path / "s", "--times", times) == 2
    err = capsys.readouterr().err
    assert "no submission of Canvas user 1002" in err
    assert "among 100 submission(s) in 1 file(s)" in err and "100 or more, a full page" in err
    assert "may be one page of several" in err and 'rel=\"next\"' in err
    assert not (tmp_path / "s").exists()


# -- Canvas's per-student due dates (issue 39, item 7) ---------------------------------------------

def test_a_students_own_due_date_in_canvas_goes_beside_the_notebook(fixture_course, tmp_path, capsys):
    times = tmp_path / "t.json"
    times.write_text(json.dumps(api_list(
        u1001={"cached_due_date": "2026-12-01T05:59:00Z"},
        u1002={"cached_due_date": "2026-12-05T05:59:00Z"})))  # an extension
    out = tmp_path / "submitted"
    assert run(fixture_course, "collect", canvas_download(tmp_path), "--from", "canvas", "-a", A,
               "--out", out, "--times", times) == 0
    files = placed(out)
    assert files[f"1002/{A}/due.txt"] == b"2026-12-05 05:59:00.000000 UTC\n"
    assert manifest(out)["1002"]["due_at"] == "2026-12-05T05:59:00+00:00"
    assert "2 student(s) with their own due date in Canvas" in capsys.readouterr().out
    # grade reads it back with the time, so export and feedback can apply it.
    (bob,) = [s for s in find_submissions(out, [A]) if s.student_id == "1002"]
    assert (bob.submitted_at, bob.due_at) == ("2026-12-03T10:30:00+00:00", "2026-12-05T05:59:00+00:00")


def test_the_manifest_keeps_gradescope_ids_and_other_assignments_rows(fixture_course, tmp_path):
    export = tmp_path / "export"
    export.mkdir()
    shutil.copy(LMS / "submission_metadata.yml", export)
    (export / "submission_9001").mkdir()
    (export / "submission_9001" / f"{A}.ipynb").write_bytes(notebook("ada"))
    out = tmp_path / "submitted"
    out.mkdir()
    (out / "lms.csv").write_text("student_id,assignment,lms,name,email,user_id,submission_id,"
                                 "file_id,file,submitted_at,late\nA100,01_other,zip,,,,,,x.ipynb,,\n")
    assert run(fixture_course, "collect", export, "--from", "gradescope", "-a", A, "--out", out) == 0
    with open(out / "lms.csv", newline="") as f:
        rows = {(r["student_id"], r["assignment"]): r for r in csv.DictReader(f)}
    assert set(rows) == {("A100", "01_other"), ("A100", A)}
    ada = rows[("A100", A)]
    assert (ada["lms"], ada["name"], ada["email"], ada["submission_id"], ada["submitted_at"]) == (
        "gradescope", "Ada Lovelace", "ada@uni.edu", "9001", "2026-11-20T17:03:00+00:00")


def test_a_broken_manifest_stops_collect_before_anything_is_written(fixture_course, tmp_path, capsys):
    out = tmp_path / "submitted"
    out.mkdir()
    (out / "lms.csv").write_text("student_id,assignment\nalice,x\n")
    download = make_zip(tmp_path / "d.zip", {f"alice/{A}.ipynb": notebook("a")})
    assert run(fixture_course, "collect", download, "--from", "zip", "-a", A, "--out", out) == 2
    assert "lms.csv: no column lms, name" in capsys.readouterr().err
    assert sorted(p.name for p in out.iterdir()) == ["lms.csv"]


@pytest.mark.parametrize("text, message", [
    ("student_id,assignment,lms,name,email,user_id,submission_id,file_id,file,submitted_at,late\n"
     "alice,x,zip,,,,,,a.ipynb,,\nalice,x,zip,,,,,,b.ipynb,,\n", "lms.csv row 3: alice / x is listed twice"),
    ("student_id,assignment,lms,name,email,user_id,submission_id,file_id,file,submitted_at,late\n"
     ",x,zip,,,,,,a.ipynb,,\n", "lms.csv row 2: student_id and assignment must not be empty"),
])
def test_a_manifest_that_is_not_collects_names_the_row(tmp_path, text, message):
    from autograder.classroom.lms_manifest import read_manifest

    (tmp_path / "lms.csv").write_text(text)
    with pytest.raises(CourseError, match=message):
        read_manifest(tmp_path)


def test_a_times_file_that_does_not_exist_is_named(fixture_course, tmp_path, capsys):
    assert run(fixture_course, "collect", canvas_download(tmp_path), "--from", "canvas", "-a", A,
               "--out", tmp_path / "s", "--times", tmp_path / "nope.json") == 2
    assert "--times" in capsys.readouterr().err and not (tmp_path / "s").exists()


def stored_zip(path: Path, members: list[tuple[zipfile.ZipInfo | str, bytes]]) -> Path:
    """A zip whose members are written as given (ZipInfo for a symbolic link, a repeated name)."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # zipfile warns of a duplicate name: on purpose here
        with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
            for info, data in members:
                archive.writestr(info, data)
    return path


def link_member(name: str, target: str) -> zipfile.ZipInfo:
    info = zipfile.ZipInfo(name)
    info.external_attr = (0o120777 << 16)  # S_IFLNK: unzip would make a symbolic link
    return info


def corrupt(path: Path, member: str) -> None:
    """Flip one byte of `member`'s stored data: its CRC no longer matches."""
    with zipfile.ZipFile(path) as archive:
        info = archive.getinfo(member)
    data = bytearray(path.read_bytes())
    start = info.header_offset + 30 + len(info.filename.encode()) + len(info.extra)
    data[start + info.compress_size // 2] ^= 0xFF
    path.write_bytes(bytes(data))


def test_a_hostile_zip_places_every_good_member_and_names_each_bad_one(fixture_course, tmp_path,
                                                                     capsys):
    secret = fixture_course.source_notebook(A)
    big = b"0" * (21 * 2**20)  # 21 MB of one byte: a few kB compressed, over the 20 MB cap
    download = stored_zip(tmp_path / "class.zip", [
        (f"alice/{A}.ipynb", notebook("alice")),
        (f"carol/{A}.ipynb", notebook("carol") * 20),
        (f"dave/{A}.ipynb", big),
        (link_member(f"erin/{A}.ipynb", str(secret)), str(secret).encode()),
        (f"frank/{A}.ipynb", notebook("frank 1")),
        (f"frank/{A}.ipynb", notebook("frank 2")),
        (f".grace/{A}.ipynb", notebook("grace")),
        (f"heidi/.{A}.ipynb", notebook("heidi")),
        (f"../ivan/{A}.ipynb", notebook("ivan")),
        ("judy/notes.txt", b"no notebook"),
        (f"bob/{A}.ipynb", notebook("bob")),
    ])
    corrupt(download, f"carol/{A}.ipynb")
    out = tmp_path / "submitted"
    assert run(fixture_course, "collect", download, "--from", "zip", "-a", A, "--out", out) == 0
    assert placed(out) == {f"alice/{A}/{A}.ipynb": notebook("alice"),
                           f"bob/{A}/{A}.ipynb": notebook("bob")}
    err = capsys.readouterr().err
    for line in (f"carol/{A}.ipynb: a corrupt member, not readable (",
                 f"dave/{A}.ipynb: {len(big)} bytes, over the cap of {20 * 2**20} (--max-size)",
                 f"erin/{A}.ipynb: a symbolic link (never followed)",
                 f"frank/{A}.ipynb: the zip holds 2 members named so",
                 f".grace/{A}.ipynb: a hidden name",
                 f"heidi/.{A}.ipynb: a hidden name",
                 f"../ivan/{A}.ipynb: a path that leads outside the download",
                 "judy/notes.txt: not a notebook"):
        assert f"not placed: {line}" in err, line
    assert err.count(f"not placed: frank/{A}.ipynb") == 2
    assert {p.name for p in tmp_path.iterdir()} == {"class.zip", "submitted", "course"}
    assert not (tmp_path / "ivan").exists() and not (out / "ivan").exists()


def test_the_size_cap_is_configurable(fixture_course, tmp_path, capsys):
    download = make_zip(tmp_path / "class.zip", {f"alice/{A}.ipynb": notebook("alice" * 500),
                                                 f"bob/{A}.ipynb": notebook("bob")})
    out = tmp_path / "submitted"
    assert run(fixture_course, "collect", download, "--from", "zip", "-a", A, "--out", out,
               "--max-size", "0.001") == 0
    assert list(placed(out)) == [f"bob/{A}/{A}.ipynb"]
    assert f"alice/{A}.ipynb: " in capsys.readouterr().err


def test_a_folder_download_never_follows_a_symbolic_link(fixture_course, tmp_path, capsys):
    """A link to the instructor's source notebook was placed as a student's submission."""
    download = tmp_path / "download"
    (download / "alice").mkdir(parents=True)
    (download / "alice" / f"{A}.ipynb").write_bytes(notebook("alice"))
    (download / "bob").mkdir()
    (download / "bob" / f"{A}.ipynb").symlink_to(fixture_course.source_notebook(A))
    (download / "carol").symlink_to(fixture_course.source_notebook(A).parent, target_is_directory=True)
    (download / "dave").mkdir()
    (download / "dave" / ".hidden.ipynb").write_bytes(notebook("dave"))
    out = tmp_path / "submitted"
    assert run(fixture_course, "collect", download, "--from", "zip", "-a", A, "--out", out) == 0
    assert placed(out) == {f"alice/{A}/{A}.ipynb": notebook("alice")}
    err = capsys.readouterr().err
    assert f"not placed: bob/{A}.ipynb: a symbolic link (never followed)" in err
    assert "not placed: carol: a symbolic link (never followed)" in err
    assert "not placed: dave/.hidden.ipynb: a hidden name" in err


def test_an_empty_zip_places_nothing_and_writes_nothing(fixture_course, tmp_path, capsys):
    download = make_zip(tmp_path / "empty.zip", {})
    out = tmp_path / "submitted"
    assert run(fixture_course, "collect", download, "--from", "canvas", "-a", A, "--out", out) == 1
    assert not (out / "lms.csv").exists()
    assert "nothing placed" in capsys.readouterr().out


def test_nothing_is_written_through_a_symbolic_link_inside_submitted(fixture_course, tmp_path,
                                                                    capsys):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    out = tmp_path / "submitted"
    out.mkdir()
    (out / "alice").symlink_to(elsewhere, target_is_directory=True)
    download = make_zip(tmp_path / "class.zip", {f"alice/{A}.ipynb": notebook("alice")})
    assert run(fixture_course, "collect", download, "--from", "zip", "-a", A, "--out", out) == 2
    assert "a symbolic link inside SUBMITTED" in capsys.readouterr().err
    assert list(elsewhere.iterdir()) == []


def test_lms_csv_cells_are_neutralized_against_formula_injection(fixture_course, tmp_path):
    export = tmp_path / "export"
    (export / "submission_1").mkdir(parents=True)
    (export / "submission_1" / f"{A}.ipynb").write_bytes(notebook("x"))
    (export / "submission_metadata.yml").write_text(
        "submission_1:\n  :submitters:\n  - :name: '=HYPERLINK(\"http://x.example\")'\n"
        "    :sid: A1\n    :email: '@SUM(1+1)'\n  :created_at: 2026-11-20 09:03:00 +00:00\n")
    out = tmp_path / "submitted"
    assert run(fixture_course, "collect", export, "--from", "gradescope", "-a", A, "--out", out) == 0
    row = manifest(out)["A1"]
    assert (row["name"], row["email"]) == ("'=HYPERLINK(\"http://x.example\")", "'@SUM(1+1)")


def test_a_download_is_never_held_in_memory_whole(tmp_path):
    """Each member under the cap was read and kept: six 8 MB members held 48 MB at once (a 2 MB
    zip of a 2 GB member peaked at 4.3 GB before the cap). Members are checked in chunks and read
    again only when placed."""
    import tracemalloc

    from autograder.classroom.collect import collect

    with zipfile.ZipFile(tmp_path / "big.zip", "w", zipfile.ZIP_DEFLATED) as archive:
        for k in range(6):
            archive.writestr(f"s{k}/data.bin", b"\0" * (8 * 2**20))
        archive.writestr(f"alice/{A}.ipynb", notebook("alice"))
    tracemalloc.start()
    try:
        found = collect(tmp_path / "big.zip", "zip", A)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert list(found.placed) == ["alice"] and len(found.skipped) == 6
    assert found.placed["alice"].entry.read() == notebook("alice")
    assert peak < 16 * 2**20, f"peak {peak / 2**20:.0f} MB"
