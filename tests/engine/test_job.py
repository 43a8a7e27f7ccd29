"""Points the trusted run withdraws stay automatic in nbgrader's gradebook, never a person's."""

from __future__ import annotations

from nbgrader.api import Gradebook

from autograder.engine.job import withdraw_points


def test_withdrawn_points_are_an_automatic_score_not_a_manual_override(tmp_path):
    db = f"sqlite:///{tmp_path / 'gradebook.db'}"
    with Gradebook(db, "course") as gb:
        gb.add_assignment("a")
        gb.add_notebook("a", "a")
        for name in ("test_x", "test_y"):
            gb.add_grade_cell(name, "a", "a", max_score=2, cell_type="code")
        gb.add_student("alice")
        gb.add_submission("a", "alice")
        for name in ("test_x", "test_y"):  # as nbgrader's SaveAutoGrades leaves them
            grade = gb.find_grade(name, "a", "a", "alice")
            grade.auto_score, grade.needs_manual_grade = 2.0, False
        gb.db.commit()
    withdraw_points(db, "course", "a", "alice", ["test_x"])
    with Gradebook(db, "course") as gb:
        x, y = (gb.find_grade(name, "a", "a", "alice") for name in ("test_x", "test_y"))
        assert (x.manual_score, x.auto_score, x.score) == (None, 0.0, 0.0)
        assert (y.manual_score, y.auto_score, y.score) == (None, 2.0, 2.0)
        assert not x.needs_manual_grade
        assert gb.find_submission("a", "alice").score == 2.0
