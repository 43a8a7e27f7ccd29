"""The exercise model (autograder/course/exercises.py): one reading of a notebook's answers and tests,
the name rule and the place rule side by side, and the gate that fails when they disagree."""

from __future__ import annotations

import os
import pickle
from pathlib import Path

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

from autograder.authoring.check import points_problems
from autograder.course import exercises

ROOT = Path(__file__).resolve().parents[2]
SOURCES = sorted((ROOT / "source").glob("*/*.ipynb"))


def _cell(source: str, **nbgrader):
    return new_code_cell(source, metadata={"nbgrader": {"schema_version": 3, **nbgrader}})


def _answer(source: str, gid: str):
    return _cell(source, grade_id=gid, solution=True, grade=False)


def _test(source: str, gid: str, points: float = 1):
    return _cell(source, grade_id=gid, grade=True, solution=False, points=points)


def _misplaced_notebook():
    """03's old mistake: test_ReLU_training sat under `relu` and its name credited ReLU."""
    return new_notebook(cells=[
        _answer("class ReLU: ...", "ReLU"),
        _test("check(ReLU)", "test_ReLU"),
        _answer("def relu(x): ...", "relu"),
        _test("check(relu)", "test_relu"),
        _test("train(relu)", "test_ReLU_training"),
    ])


def test_a_notebook_reads_as_its_answers_and_tests():
    nb = new_notebook(cells=[
        new_code_cell("import numpy as np"),
        new_markdown_cell("## Exercise 1"),
        _answer("def relu(x):\n    return np.maximum(x, 0)\n_helper = 1", "relu"),
        _test('"""relu keeps the positive part."""\nassert relu(1) == 1', "test_relu", 2),
        _test("assert relu(-1) == 0\n### BEGIN HIDDEN TESTS\nassert relu(0) == 0\n### END HIDDEN TESTS",
              "test_relu_hidden", 1),
        _answer("x = 3", "answer_x"),
        _test("%time assert x == 3", "test_answer_x", 1.5),
    ])
    model = exercises.read(nb)
    assert list(model.answers) == ["relu", "answer_x"]
    assert model.answers["relu"].names == ("_helper", "relu")
    assert model.names() == {"relu", "x"}  # private helpers are no exercise
    assert model.test_points() == {"test_relu": 2.0, "test_relu_hidden": 1.0, "test_answer_x": 1.5}
    assert model.max_score == 4.5
    assert model.points() == {"relu": 3.0, "answer_x": 1.5}
    assert model.needs() == {"test_relu": ["_helper", "relu"], "test_relu_hidden": ["_helper", "relu"],
                             "test_answer_x": ["x"]}
    assert [t.hidden for t in model.tests.values()] == [False, True, False]
    assert model.titles() == {"test_relu": "relu keeps the positive part.", "test_relu_hidden": "Test 2",
                              "test_answer_x": "Test 3", "relu": "Your answer: relu",
                              "answer_x": "Your answer 2"}
    assert model.tests_of("relu") == ["test_relu", "test_relu_hidden"] and model.misplaced() == []


def test_the_answer_defining_a_name_is_the_last_one_that_does():
    """Where check puts a right answer written another way: after the definition later cells use."""
    nb = new_notebook(cells=[_answer("def relu(x): ...", "relu_first"), _answer("x = 1", "answer_x"),
                             _answer("def relu(x):\n    return x", "relu_again")])
    model = exercises.read(nb)
    assert model.defining("relu") == "relu_again" and model.defining("x") == "answer_x"
    assert model.defining("gelu") is None


def test_the_longest_answer_name_owns_a_test():
    nb = new_notebook(cells=[_answer("def relu(x): ...", "relu"), _answer("def relu_grad(x): ...", "relu_grad"),
                             _test("", "test_relu_grad_shape")])
    assert exercises.read(nb).points() == {"relu": 0.0, "relu_grad": 1.0}


def test_a_test_placed_under_another_answer_than_its_name_is_named():
    nb = _misplaced_notebook()
    (line,) = exercises.read(nb).misplaced()
    assert line.startswith("test_ReLU_training is ReLU's test by its name but follows the solution cell relu")
    nb.cells[-1].metadata["nbgrader"]["grade_id"] = "test_relu_training"
    assert exercises.read(nb).misplaced() == []


def test_a_test_above_every_answer_is_told_where_to_go():
    nb = new_notebook(cells=[_test("check(f)", "test_f"), _answer("def f(): ...", "f")])
    assert exercises.read(nb).misplaced() == ["test_f is f's test by its name but follows no solution cell: "
                                              "move it under f"]


def test_checks_tests_gate_fails_when_the_two_rules_disagree():
    (problem,) = [p for p in points_problems(_misplaced_notebook(), "tiny") if p.startswith("gate 'tests'")]
    assert "test_ReLU_training" in problem


def test_a_test_of_no_answer_is_an_orphan():
    nb = new_notebook(cells=[_answer("def f(): ...", "f"), _test("", "test_f"), _test("", "test_stray")])
    model = exercises.read(nb)
    assert model.orphans() == ["test_stray"] and model.misplaced() == []
    assert model.tests["test_stray"].follows == "f" and model.tests["test_stray"].named is None


@pytest.mark.parametrize("path", SOURCES, ids=[p.stem for p in SOURCES])
def test_every_source_notebook_credits_each_test_to_one_answer_by_both_rules(path):
    model = exercises.of_notebook(path)
    assert model.misplaced() == [] and model.orphans() == []
    assert model.answers and model.tests and model.max_score > 0


def test_a_model_travels_to_another_process_and_stays_read_only():
    model = exercises.of_notebook(SOURCES[0])
    copy = pickle.loads(pickle.dumps(model))
    assert copy == model and copy.points() == model.points()
    with pytest.raises(TypeError):
        copy.tests["test_x"] = None  # shared by every reader: nobody changes it


def test_a_notebook_is_read_again_once_it_changes(tmp_path):
    path = tmp_path / "a.ipynb"
    nb = new_notebook(cells=[_answer("def f(): ...", "f"), _test("", "test_f")])
    nbformat.write(nb, path)
    first = exercises.of_notebook(path)
    assert exercises.of_notebook(path) is first  # read once
    nb.cells[1].metadata["nbgrader"]["points"] = 7
    nbformat.write(nb, path)
    os.utime(path, ns=(0, os.stat(path).st_mtime_ns + 10 ** 9))
    assert exercises.of_notebook(path).max_score == 7


@pytest.mark.parametrize("source, title", [
    ('"""scale multiplies every element by the factor."""\ncheck(1)', "scale multiplies every element by the factor."),
    ('"""Hidden: on 2-D arrays.\n\nMore words."""\n### BEGIN HIDDEN TESTS\nx = 1\n### END HIDDEN TESTS',
     "Hidden: on 2-D arrays."),
    ('"""timing is synchronized."""\n%timeit f()', "timing is synchronized."),  # IPython magic
    ("check(1)", ""),
])
def test_a_test_cell_is_named_by_its_docstring_first_line(source, title):
    assert exercises.docstring_title(source) == title
