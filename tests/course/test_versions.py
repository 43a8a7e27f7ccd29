"""Which version a notebook came from, by nbgrader's checksums (autograder/course/versions.py)."""

from __future__ import annotations

from nbformat.v4 import new_code_cell, new_notebook

from autograder.course.versions import Version, cell_checksums, graded_ids, history, received


def version(commit: str, **checksums: str) -> Version:
    return Version(commit, "2026-12-01T00:00:00+00:00", checksums, frozenset(checksums))


V1 = version("1111", setup="s1", test_a="a1", summary="m1")
V2 = version("2222", setup="s1", test_a="a1", test_b="b2", summary="m2")  # a test added
V3 = version("3333", setup="s1", test_a="a1", test_b="b2", summary="m2")  # hidden tests changed
NEWEST_FIRST = [V3, V2, V1]


def test_a_copy_is_given_the_version_it_agrees_with_and_lacks_fewest_cells_of():
    assert received({"setup": "s1", "test_a": "a1", "summary": "m1"}, NEWEST_FIRST) is V1
    # A copy without its summary agrees with all three: it lacks one cell of V1, two of V2 and V3.
    assert received({"setup": "s1", "test_a": "a1"}, NEWEST_FIRST) is V1
    # V2 and V3 differ in their hidden tests only: the newest.
    assert received({"setup": "s1", "test_a": "a1", "test_b": "b2", "summary": "m2"}, NEWEST_FIRST) is V3
    assert received({"test_a": "a1", "test_b": "b2"}, NEWEST_FIRST) is V3
    # A V3 copy without its summary: V1 lacks its test_b, V3 only the summary the student deleted.
    assert received({"setup": "s1", "test_a": "a1", "test_b": "b2"}, NEWEST_FIRST) is V3


def test_a_copy_with_a_cell_no_version_has_matches_none():
    assert received({"test_a": "zz"}, NEWEST_FIRST) is None
    assert received({}, NEWEST_FIRST) is None  # stripped metadata: nothing tells


def test_checksums_are_read_from_labelled_cells_and_bounded():
    cells = [new_code_cell("setup"), new_code_cell("t"), new_code_cell("x"), new_code_cell("given")]
    cells[0].metadata["nbgrader"] = {"grade_id": "setup", "locked": True, "checksum": "c0"}
    cells[1].metadata["nbgrader"] = {"grade_id": "test_a", "grade": True, "checksum": "c1"}
    cells[2].metadata["nbgrader"] = {"grade_id": "huge", "grade": True, "checksum": "9" * 10_000}
    cells[3].metadata["nbgrader"] = {"grade_id": "given", "locked": True, "checksum": "c3"}
    nb = new_notebook(cells=cells)
    assert cell_checksums(nb) == {"setup": "c0", "test_a": "c1", "given": "c3"}
    assert graded_ids(nb) == {"test_a", "huge", "given"}  # the setup cell decides no score


def test_a_course_outside_git_has_no_history(tmp_path):
    assert history(tmp_path, "01_numpy_mlp") == []
