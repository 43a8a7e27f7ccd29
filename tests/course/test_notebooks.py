"""Notebook helpers: source validation, normalization, leak detection. No kernels."""

from __future__ import annotations

import copy

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output

from autograder.course.notebooks import (
    KERNELSPEC,
    dumps,
    normalize,
    notebook_text_lines,
    read_notebook,
    validate_source,
)


def cell(source, grade_id=None, *, grade=False, solution=False, locked=False, points=None):
    meta = {"grade": grade, "solution": solution, "locked": locked, "schema_version": 3,
            "task": False}
    if grade_id is not None:
        meta["grade_id"] = grade_id
    if points is not None:
        meta["points"] = points
    return new_code_cell(source, metadata={"nbgrader": meta})


def solution(name):
    return cell(f"def {name}(x):\n    ### BEGIN SOLUTION\n    return x * 2\n    ### END SOLUTION",
                name, solution=True)


def graded_cell(name, points=1):
    return cell(f"assert {name}(1) == 2", f"test_{name}", grade=True, locked=True, points=points)


def errors_of(*cells):
    return validate_source(new_notebook(cells=list(cells)), "source/x/x.ipynb")


def test_a_well_formed_notebook_has_no_error():
    assert errors_of(cell("import numpy", "setup", locked=True), solution("f"), graded_cell("f")) == []


@pytest.mark.parametrize("cells, expected", [
    ((solution("f"), graded_cell("f"), cell("assert f(2) == 4", "test_f", grade=True, points=1)),
     ["cell 3 (grade_id 'test_f')", "duplicate grade_id 'test_f'", "cell 2"]),
    ((solution("f"), cell("assert f(1) == 2", "test_f", grade=True, locked=True)),
     ["cell 2 (grade_id 'test_f')", "test cell without points"]),
    ((solution("f"), graded_cell("f", points=0)), ["cell 2", "points = 0"]),
    ((solution("f"), graded_cell("f", points=-1)), ["cell 2", "points = -1"]),
    ((cell("def f(x):\n    ### BEGIN SOLUTION\n    return x\n    ### END SOLUTION", solution=True),),
     ["cell 1 (code: 'def f(x):')", "solution cell without a grade_id"]),
    ((cell("x = 1\n### BEGIN SOLUTION\ny = 2\n### END SOLUTION", "helper", locked=True),),
     ["cell 1", "solution region in a cell that is not a solution cell"]),
    ((cell("### BEGIN HIDDEN TESTS\nassert True\n### END HIDDEN TESTS", "demo"),),
     ["cell 1", "hidden tests in a cell that is not a test cell"]),
    ((cell("### BEGIN SOLUTION\nx = 1", "f", solution=True),), ["without 'END SOLUTION'"]),
])
def test_each_source_error_names_the_notebook_the_cell_and_the_problem(cells, expected):
    errors = errors_of(*cells)
    assert len(errors) == 1, errors
    assert errors[0].startswith("source/x/x.ipynb, ")
    for fragment in expected:
        assert fragment in errors[0]


def messy_notebook():
    nb = new_notebook(cells=[
        cell("print(1)", "setup", locked=True),
        new_markdown_cell("# Title"),
        new_code_cell("1 + 1"),
    ])
    nb.cells[0].outputs = [new_output("stream", name="stdout", text="1\n")]
    nb.cells[0].execution_count = 3
    nb.cells[0].metadata["execution"] = {"iopub.execute_input": "2024-01-01T00:00:00"}
    nb.cells[2].metadata["collapsed"] = True
    nb.cells[2].metadata["colab"] = {"base_uri": "https://localhost:8080/"}
    nb.metadata.update({"widgets": {"state": {}}, "colab": {"provenance": [], "gpuType": "T4"},
                        "kernelspec": {"name": "python3", "display_name": "Python 3 (ipykernel)"},
                        "language_info": {"name": "python", "version": "3.11.7"}})
    for c in nb.cells:
        del c["id"]
    nb.nbformat_minor = 4
    return nb


def test_normalize_strips_outputs_counts_and_volatile_metadata():
    nb = normalize(messy_notebook())
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert all(c.outputs == [] and c.execution_count is None for c in code)
    assert "execution" not in nb.cells[0].metadata and nb.cells[0].metadata["nbgrader"]
    assert "collapsed" not in nb.cells[2].metadata and "colab" not in nb.cells[2].metadata
    assert nb.metadata["kernelspec"] == KERNELSPEC
    assert nb.metadata["language_info"] == {"name": "python"}
    assert nb.metadata["colab"] == {"gpuType": "T4"}  # what makes Colab open a GPU runtime stays
    assert "widgets" not in nb.metadata
    nbformat.validate(nb)


def test_normalize_is_deterministic_and_idempotent():
    first = dumps(normalize(messy_notebook()))
    assert dumps(normalize(messy_notebook())) == first  # fresh cell ids are not random
    assert dumps(normalize(nbformat.reads(first, as_version=4))) == first
    ids = [c["id"] for c in nbformat.reads(first, as_version=4).cells]
    assert ids[0] == "setup" and len(set(ids)) == 3


@pytest.fixture
def source_nb(fixture_course):
    return read_notebook(fixture_course.source_notebook("00_fixture"))


def test_notebook_text_lines_include_outputs():
    nb = copy.deepcopy(messy_notebook())
    assert "1" in notebook_text_lines(nb) and "print(1)" in notebook_text_lines(nb)
