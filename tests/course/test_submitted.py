"""What SUBMITTED holds, as students hand it in: renamed notebooks, loose files, empty folders, times."""

from __future__ import annotations

from autograder.course.lateness import DUE_FILE, TIMESTAMP_FILE
from autograder.course.submitted import assignment_of, collect, handed_in

A = ["01_a", "02_b"]


def tree(root, files: dict[str, str]):
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root


def test_a_renamed_notebook_is_recognized_and_another_is_not():
    for name in ("01_a.ipynb", "Copy of 01_a.ipynb", "Copy of Copy of 01_a.ipynb", "01_a (1).ipynb",
                 "01_a-2.ipynb", " 01_a .ipynb"):
        assert assignment_of(name, A) == "01_a", name
    for name in ("01_ab.ipynb", "my 01_a.ipynb", "Untitled0.ipynb", "02_b.py.ipynb"):
        assert assignment_of(name, A) is None, name


def test_each_student_gets_one_submission_per_assignment_with_what_was_found(tmp_path):
    root = tree(tmp_path, {
        "alice/01_a/01_a.ipynb": "{}", "alice/01_a/Copy of 01_a.ipynb": "{}",
        "alice/01_a/" + TIMESTAMP_FILE: "2026-11-20 17:03:00.000000 UTC",
        "alice/01_a/" + DUE_FILE: "2026-12-04 23:59:00.000000 UTC",
        "alice/02_b/Untitled0.ipynb": "{}",
        "bob/01_a/notes.txt": "", "bob/Copy of 02_b.ipynb": "{}", "bob/homework/x.py": "",
        "carol/.keep": "", "__MACOSX/01_a/01_a.ipynb": "{}",
    })
    found = {(s.student_id, s.assignment): s for s in collect(root, A)}
    assert sorted(found) == [("alice", "01_a"), ("alice", "02_b"), ("bob", "01_a"), ("bob", "02_b"),
                             ("bob", "homework"), ("carol", "01_a"), ("carol", "02_b")]
    alice = found["alice", "01_a"]
    assert alice.notebook.name == "01_a.ipynb" and alice.warnings == [
        "ignored other notebooks in 01_a/: Copy of 01_a.ipynb"]
    assert (alice.submitted_at, alice.due_at) == ("2026-11-20T17:03:00+00:00", "2026-12-04T23:59:00+00:00")
    assert found["alice", "02_b"].notebook.name == "Untitled0.ipynb"
    assert "renamed notebook" in found["alice", "02_b"].warnings[0]
    assert (found["bob", "01_a"].status, found["bob", "01_a"].reason) == (
        "missing", "the folder 01_a/ holds no notebook")
    assert found["bob", "02_b"].notebook.name == "Copy of 02_b.ipynb"
    assert "found outside an 02_b/ folder" in found["bob", "02_b"].warnings[0]
    assert found["bob", "homework"].status == "unknown_assignment"
    assert "holds: x.py" in found["bob", "homework"].reason
    assert found["carol", "01_a"].reason == "the student's folder is empty"  # .keep is ignored


def test_two_notebooks_neither_named_for_the_assignment_are_an_error_and_one_named_wins(tmp_path):
    root = tree(tmp_path, {"dan/01_a/a.ipynb": "{}", "dan/01_a/b.ipynb": "{}",
                           "eve/01_a/Untitled.ipynb": "{}", "eve/01_a/01_a (2).ipynb": "{}"})
    found = {s.student_id: s for s in collect(root, ["01_a"])}
    assert found["dan"].status == "error" and "holds 2 notebooks and none is 01_a.ipynb" in found["dan"].reason
    assert found["eve"].notebook.name == "01_a (2).ipynb" and "ignored Untitled.ipynb" in found["eve"].warnings[0]


def test_an_unreadable_time_is_a_warning_not_a_failure(tmp_path):
    root = tree(tmp_path, {"fay/01_a/01_a.ipynb": "{}", "fay/01_a/" + TIMESTAMP_FILE: "soon"})
    (sub,) = collect(root, ["01_a"])
    assert sub.notebook is not None and sub.submitted_at == ""
    assert sub.warnings[0].startswith("submission time unknown: timestamp.txt holds 'soon'")


def test_other_assignments_folders_are_passed_over_and_handed_in_lists_what_is_there(tmp_path):
    root = tree(tmp_path, {"gus/02_b/02_b.ipynb": "{}", "hal/Copy of 01_a.ipynb": "{}", "ivy/misc/x": ""})
    assert [s.assignment for s in collect(root, ["01_a"], known=A) if s.student_id == "gus"] == ["01_a"]
    assert handed_in(root, A) == ["01_a", "02_b"]
    assert handed_in(root, ["02_b"]) == ["02_b"]
