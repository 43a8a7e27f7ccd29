"""The mutant format (docs/authoring.md): parsing, its errors, and applying a mutant."""

from __future__ import annotations

import pytest

from autograder.course import grading_folder
from autograder.course.mutants import (
    MutantError,
    apply_mutant,
    check_mutant,
    load_mutants,
    parse_mutant,
)
from autograder.course.notebooks import grade_id, read_notebook

GOOD = '''"""scale adds the factor instead of multiplying by it.

A second docstring line is allowed and ignored.
"""
# replaces: scale
# caught by: test_scale, test_scale_hidden
def scale(x, factor):
    return x + factor
'''


@pytest.fixture
def source_nb(fixture_course):
    return read_notebook(fixture_course.source_notebook("00_fixture"))


def write(tmp_path, text, name="m.py"):
    path = tmp_path / name
    path.write_text(text)
    return path


def test_parse_reads_the_header_and_keeps_only_the_code(tmp_path):
    mutant = parse_mutant(write(tmp_path, GOOD, "adds.py"))
    assert mutant.name == "adds"
    assert mutant.mistake == "scale adds the factor instead of multiplying by it."
    assert mutant.replaces == "scale"
    assert mutant.caught_by == ("test_scale", "test_scale_hidden")
    assert mutant.code == "def scale(x, factor):\n    return x + factor"


@pytest.mark.parametrize("text, message", [
    ("# replaces: scale\n# caught by: test_scale\ndef scale(x, f):\n    return x\n", "docstring"),
    ('"""m."""\n# caught by: test_scale\ndef scale(x, f):\n    return x\n', "# replaces:"),
    ('"""m."""\n# replaces: scale\ndef scale(x, f):\n    return x\n', "# caught by:"),
    ('"""m."""\n# replaces: scale\n# caught by: test_scale\n', "no code"),
    ('"""m."""\n# replaces: scale\n# caught by: test_scale\ndef scale(:\n', "not valid Python"),
])
def test_malformed_mutants_are_rejected_with_the_fix(tmp_path, text, message):
    path = write(tmp_path, text)
    with pytest.raises(MutantError, match=message) as error:
        parse_mutant(path)
    assert str(path) in str(error.value)


@pytest.mark.parametrize("replaces, caught_by, message", [
    ("no_such_exercise", "test_scale", "names no solution cell"),
    ("test_scale", "test_scale", "names no solution cell"),  # a test cell is not a solution cell
    ("scale", "test_nothing", "names no test cell"),
    ("mean_square", "test_scale", "comes before the solution cell"),
])
def test_a_mutant_naming_cells_that_cannot_work_is_an_error(tmp_path, source_nb, replaces,
                                                            caught_by, message):
    mutant = parse_mutant(write(tmp_path, f'"""m."""\n# replaces: {replaces}\n'
                                          f"# caught by: {caught_by}\ndef f():\n    pass\n"))
    with pytest.raises(MutantError, match=message):
        check_mutant(mutant, source_nb)


def test_apply_replaces_the_cell_and_cuts_after_the_last_named_test(tmp_path, source_nb):
    mutant = parse_mutant(write(tmp_path, GOOD))
    mutated = apply_mutant(source_nb, mutant)
    ids = [grade_id(c) for c in mutated.cells]
    assert ids[-1] == "test_scale_hidden"
    assert "mean_square" not in ids
    assert next(c for c in mutated.cells if grade_id(c) == "scale").source == mutant.code
    # The source notebook itself is untouched.
    assert "### BEGIN SOLUTION" in next(c for c in source_nb.cells if grade_id(c) == "scale").source
    whole = apply_mutant(source_nb, mutant, truncate=False)
    assert len(whole.cells) == len(source_nb.cells)


def test_the_fixture_mutants_are_valid(fixture_course, source_nb):
    mutants = load_mutants(grading_folder.folder(fixture_course.root, "00_fixture") / "mutants")
    assert len(mutants) >= 4
    for mutant in mutants:
        check_mutant(mutant, source_nb)
