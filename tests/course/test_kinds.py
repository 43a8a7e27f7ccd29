"""autograder/course/kinds.py: a kinds.toml read, its mistakes named, the share measured."""

from __future__ import annotations

import pytest

from autograder.authoring.check import AssignmentReport, format_table, transcription_line
from autograder.course import kinds

POINTS = {"relu": 1.0, "mlp_backward": 7.0, "train": 2.0}
GOOD = """
[relu]
kind = "one_line"
why = "np.maximum(h, 0)"

[mlp_backward]
kind = "derived"
why = "the sum over every leading index"

[train]
kind = "transcribed"
why = "the slides' loop"
"""


def write(tmp_path, text, assignment="01_x"):
    folder = tmp_path / "grading" / assignment
    folder.mkdir(parents=True, exist_ok=True)
    (folder / kinds.FILE).write_text(text)
    return tmp_path


def test_a_classification_is_read_in_order_and_measured(tmp_path):
    found = kinds.read(write(tmp_path, GOOD), "01_x")
    assert list(found) == ["relu", "mlp_backward", "train"]
    assert found["mlp_backward"] == kinds.Kind("mlp_backward", "derived", "the sum over every leading index")
    assert kinds.problems(found, POINTS, "01_x") == []
    assert kinds.copied_points(found, POINTS) == 3.0
    assert kinds.share(found, POINTS) == pytest.approx(0.3)


def test_no_file_is_no_classification_and_a_missing_exercise_is_named(tmp_path):
    assert kinds.read(tmp_path, "01_x") == {}
    found = kinds.read(write(tmp_path, GOOD.split("[train]")[0] + '[gone]\nkind = "derived"\nwhy = "x"\n'),
                       "01_x")
    assert kinds.problems(found, POINTS, "01_x") == [
        "grading/01_x/kinds.toml: exercise train has no kind",
        "grading/01_x/kinds.toml: [gone] is no exercise of the notebook"]
    assert kinds.copied_points(found, POINTS) is None and kinds.share(found, POINTS) is None


@pytest.mark.parametrize("text, words", [
    ('[relu]\nkind = "copied"\nwhy = "x"\n', "one of derived, designed, transcribed, one_line"),
    ('[relu]\nkind = "derived"\nwhy = " "\n', "says no why"),
    ('[relu]\nkind = "derived"\n', "exactly kind"),
    ('[relu]\nkind = "derived"\nwhy = "x"\npoints = 3\n', "exactly kind"),
    ("[relu\n", "not TOML"),
])
def test_a_malformed_classification_says_what_to_fix(tmp_path, text, words):
    with pytest.raises(kinds.KindsError, match=words):
        kinds.read(write(tmp_path, text), "01_x")


def test_the_one_line_measure_counts_code_not_comments_over_every_region():
    source = ("def f(x):\n    ### BEGIN SOLUTION\n    # a comment\n\n    return x\n    ### END SOLUTION\n"
              "def g(x):\n    ### BEGIN SOLUTION\n    y = x\n    return y\n    ### END SOLUTION\n")
    assert kinds.solution_lines(source) == 3


def _report(name, max_score, copied):
    return AssignmentReport(assignment=name, max_score=max_score, solution_score=max_score, release_score=0,
                            mutants_caught=4, mutants_total=4, seconds=1.0, transcribed_points=copied,
                            transcribed_share=None if copied is None else copied / max_score)


def test_checks_table_and_line_show_the_share_and_who_has_no_kinds():
    reports = [_report("01_x", 16, 5), _report("02_y", 4, 3), _report("03_z", 10, None)]
    table = format_table(reports)
    assert "transcribed" in table.splitlines()[0]
    assert "5/16 31%" in table and "3/4 75%" in table
    line = transcription_line(reports)
    assert line.startswith("Transcribed or one line: 8 of 20 points (40%) over 2 assignment(s)")
    assert "no kind for every exercise of 03_z" in line
