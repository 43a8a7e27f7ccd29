"""Which assignments `grade` grades: those named, else those handed in (issue 19: the README's
flow graded every assignment of source/, and export then wrote 0 over grades Canvas held)."""

from __future__ import annotations

from autograder.__main__ import main
from autograder.course.submitted import handed_in


def add_assignment(course, name: str) -> None:
    (course.source_dir / name).mkdir()
    (course.source_dir / name / f"{name}.ipynb").write_bytes(
        course.source_notebook("00_fixture").read_bytes())


def test_only_the_assignments_handed_in_are_graded_when_none_is_named(fixture_course, tmp_path):
    add_assignment(fixture_course, "01_second")
    add_assignment(fixture_course, "02_third")
    submitted = tmp_path / "submitted"
    (submitted / "1001" / "01_second").mkdir(parents=True)
    (submitted / "1002").mkdir(parents=True)
    (submitted / "1002" / "Copy of 02_third (1).ipynb").write_text("{}")
    (submitted / "1003" / "notes").mkdir(parents=True)
    (submitted / ".ipynb_checkpoints" / "00_fixture").mkdir(parents=True)
    assert fixture_course.assignments() == ["00_fixture", "01_second", "02_third"]
    assert handed_in(submitted, fixture_course.assignments()) == ["01_second", "02_third"]


def test_grade_with_nothing_collected_grades_nothing_and_says_so(fixture_course, tmp_path, capsys):
    submitted = tmp_path / "submitted"
    (submitted / "1001" / "hw1").mkdir(parents=True)
    out = tmp_path / "grades"
    assert main(["grade", str(submitted), "--out", str(out), "--root", str(fixture_course.root)]) == 2
    assert "holds no folder of any assignment of this course (00_fixture)" in capsys.readouterr().err
    assert not (out / "grades.csv").exists()
