"""Points are stated once: the intro tables and summary cells agree with the nbgrader metadata."""

from __future__ import annotations

import copy
from pathlib import Path

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

from autograder.course import exercises
from autograder.course.points import (
    Disagreement,
    disagreements,
    summary_points,
    table_points,
)

ROOT = Path(__file__).resolve().parents[2]
SOURCES = sorted((ROOT / "source").glob("*/*.ipynb"))


def _read(path: Path):
    return nbformat.read(path, as_version=4)


@pytest.mark.parametrize("path", SOURCES, ids=[p.stem for p in SOURCES])
def test_every_source_notebook_states_its_points_once(path):
    nb = _read(path)
    assert table_points(nb) is not None, f"{path.stem}: the intro table has no points column"
    assert summary_points(nb) is not None, f"{path.stem}: no summary(...) cell"
    problems = disagreements(nb, path.stem)
    assert not problems, "\n".join(map(str, problems))


def _cell(source: str, **nbgrader):
    return new_code_cell(source, metadata={"nbgrader": {"schema_version": 3, **nbgrader}})


def _tiny(table: str, summary: str):
    return new_notebook(cells=[
        new_markdown_cell(table),
        _cell("def relu(h):\n    pass", grade_id="relu", solution=True, grade=False),
        _cell("passed('relu')", grade_id="test_relu", grade=True, solution=False, points=1),
        _cell("'''hidden'''", grade_id="test_relu_hidden", grade=True, solution=False, points=2),
        _cell("passed('relu in training')", grade_id="test_relu_training", grade=True, solution=False,
              points=1),
        _cell("answer_a = 1", grade_id="answer_a", solution=True, grade=False),
        _cell("", grade_id="test_answer_a", grade=True, solution=False, points=1),
        _cell("answer_b = 1", grade_id="answer_b", solution=True, grade=False),
        _cell("", grade_id="test_answer_b", grade=True, solution=False, points=1),
        _cell(summary, grade_id="summary", locked=True, grade=False, solution=False),
    ])


TABLE = "| exercise | what | points |\n| --- | --- | --- |\n| `relu(h)` | relu | 4 |\n| `answer_*` | two | 2 |\n"
SUMMARY = 'summary({"relu": 3, "relu in training": 1, "answer_a": 1, "answer_b": 1})'


def test_points_come_from_the_test_cells_of_each_exercise():
    nb = _tiny(TABLE, SUMMARY)
    assert exercises.read(nb).points() == {"relu": 4.0, "answer_a": 1.0, "answer_b": 1.0}
    assert disagreements(nb, "tiny") == []


def test_a_planted_disagreement_in_the_summary_is_named():
    nb = _tiny(TABLE, SUMMARY.replace('"relu": 3', '"relu": 5'))
    assert disagreements(nb, "tiny") == [Disagreement("tiny", "relu", "summary", 6.0, 4.0)]


def test_a_planted_disagreement_in_the_metadata_is_named_in_both_places():
    nb = _tiny(TABLE, SUMMARY)
    nb.cells[3].metadata.nbgrader.points = 3  # the hidden test of relu, now worth 3
    assert disagreements(nb, "tiny") == [Disagreement("tiny", "relu", "intro table", 4.0, 5.0),
                                         Disagreement("tiny", "relu", "summary", 4.0, 5.0)]


def test_a_pattern_row_is_compared_with_the_sum_it_stands_for():
    nb = _tiny(TABLE.replace("| two | 2 |", "| two | 3 |"), SUMMARY)
    assert disagreements(nb, "tiny") == [Disagreement("tiny", "answer_*", "intro table", 3.0, 2.0)]


def test_missing_and_unknown_exercises_are_named():
    nb = _tiny(TABLE.replace("`relu(h)`", "`rectifier(h)`"), SUMMARY.replace('"answer_b": 1', '"answer_c": 1'))
    assert set(disagreements(nb, "tiny")) == {
        Disagreement("tiny", "rectifier", "intro table", 4.0, None),
        Disagreement("tiny", "relu", "intro table", None, 4.0),
        Disagreement("tiny", "answer_c", "summary", 1.0, None),
        Disagreement("tiny", "answer_b", "summary", None, 1.0),
    }


def test_a_test_cell_of_no_exercise_is_named():
    nb = _tiny(TABLE, SUMMARY)
    nb.cells.insert(3, _cell("", grade_id="test_stray", grade=True, solution=False, points=1))
    assert disagreements(nb, "tiny") == [Disagreement("tiny", "test_stray", "test cells", None, None)]


def test_a_table_without_points_states_none():
    nb = _tiny("| exercise | what |\n| --- | --- |\n| `relu(h)` | relu |\n", SUMMARY)
    assert table_points(nb) is None
    assert disagreements(nb, "tiny") == []


def test_an_unreadable_points_column_is_a_failed_gate_naming_the_row():
    from autograder.authoring.check import points_problems

    nb = _tiny(TABLE.replace("| relu | 4 |", "| relu | 2 + 2 |"), SUMMARY)
    (problem,) = points_problems(nb, "tiny")
    assert problem.startswith("gate 'points': tiny: ") and "2 + 2" in problem, problem
    assert points_problems(_tiny(TABLE, SUMMARY), "tiny") == []


def test_a_real_notebook_with_a_planted_disagreement_fails():
    nb = copy.deepcopy(_read(SOURCES[0]))
    test_cell = next(c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade"))
    test_cell.metadata.nbgrader.points += 1
    problems = disagreements(nb, SOURCES[0].stem)
    assert {p.where for p in problems} == {"intro table", "summary"}
    assert "the summary says" in str(problems[-1])
