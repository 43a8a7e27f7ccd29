"""The one leak rule (autograder/authoring/leaks.py), as `check`'s gate, `publish` and the release test use it."""

from __future__ import annotations

import nbformat
import pytest

from autograder.authoring.leaks import find_leaks, secrets, split_regions
from autograder.course.notebooks import grade_id, read_notebook


@pytest.fixture
def found(fixture_course):
    return secrets(fixture_course)


def search(tmp_path, found, text: str, name: str = "notes.md") -> list[str]:
    folder = tmp_path / "tree"
    folder.mkdir(exist_ok=True)
    (folder / name).write_text(text)
    return [leak.text for leak in find_leaks(folder, found)]


def test_solution_and_hidden_lines_and_delimiters_are_found(tmp_path, found):
    assert search(tmp_path, found, "        return x * factor  # pasted\n") == ["return x * factor"]
    assert search(tmp_path, found, "x_hidden = np.arange(6.0).reshape(2, 3)\n") != []
    assert search(tmp_path, found, "# ### BEGIN SOLUTION\n") == ["# ### BEGIN SOLUTION"]


def test_what_the_release_shows_anyway_is_not_a_leak(tmp_path, found, fixture_course):
    source_nb = read_notebook(fixture_course.source_notebook("00_fixture"))
    public = [line for c in source_nb.cells for line in c.source.splitlines()
              if "BEGIN" not in line and "END" not in line and grade_id(c) not in
              ("scale", "mean_square", "test_scale_hidden", "test_mean_square_hidden")]
    assert search(tmp_path, found, "\n".join(public)) == []
    assert search(tmp_path, found, "    # YOUR CODE HERE\n    raise NotImplementedError()\n") == []


def test_a_notebooks_outputs_are_searched_and_one_file_can_be_searched_alone(tmp_path, found):
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(
        "print(answer)", outputs=[nbformat.v4.new_output("stream", name="stdout", text="return x * factor\n")])])
    path = tmp_path / "shown.ipynb"
    nbformat.write(nb, path)
    assert [leak.text for leak in find_leaks(path, found)] == ["return x * factor"]


def test_a_line_printed_in_pieces_is_searched_whole(tmp_path, found):
    """A kernel may send one print as several stream outputs; the leak is the joined line."""
    pieces = [nbformat.v4.new_output("stream", name="stdout", text=text)
              for text in ("return x ", "* factor\n")]
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("print(answer)", outputs=pieces)])
    path = tmp_path / "shown.ipynb"
    nbformat.write(nb, path)
    assert [leak.text for leak in find_leaks(path, found)] == ["return x * factor"]


# -- one rule: check's gate, the release test and publish's calendar gate agree -----------------------

def _course_with_prose(course, prose: str):
    """`course` (the fixture) with `prose` as a markdown cell of 00_fixture's source, its release
    (the source outside the regions, as nbgrader leaves it) and a second assignment, 01_second,
    a copy released after 00_fixture and before 00_fixture is due, with its release; returns
    (course, term)."""
    from datetime import datetime, timezone

    from autograder.course.notebooks import write_notebook
    from autograder.course.term import Term

    source = read_notebook(course.source_notebook("00_fixture"))
    source.cells.insert(2, nbformat.v4.new_markdown_cell(prose))
    write_notebook(source, course.source_notebook("00_fixture"))
    (course.source_dir / "01_second").mkdir()
    write_notebook(source, course.source_notebook("01_second"))
    for cell in source.cells:
        cell.source = split_regions(cell.source)[1]
    for assignment in ("00_fixture", "01_second"):
        write_notebook(source, course.release_notebook(assignment))

    def day(n):
        return datetime(2026, 12, n, 9, tzinfo=timezone.utc)

    return course, Term(release={"00_fixture": day(1), "01_second": day(3)},
                        due={"00_fixture": day(8), "01_second": day(15)})


@pytest.mark.parametrize("prose,line", [
    ("Hint: write `return x * factor` and you are done.", "return x * factor"),
    ("Last year's answer:\n\n```python\nreturn float(np.mean(np.asarray(x, dtype=float) ** 2))\n```",
     "return float(np.mean(np.asarray(x, dtype=float) ** 2))"),
    ("Multiply `x` by the factor: `x * factor` has the shape of `x`.", None),
])
def test_check_the_release_test_and_publish_agree_on_an_answer_in_the_prose(fixture_course, prose, line):
    """An answer line in the prose of a notebook: check's gate, the release test's report and
    publish's calendar gate each name it, or each finds nothing. Before the rule was one, check's
    gate missed both answers (a line inside a sentence; a whole line of prose, which it took for
    code the course shows), the release test found both and the calendar gate only the second."""
    from autograder.authoring.check import release_leaks
    from autograder.authoring.student_tree import shown_answers
    from tests.test_release_leak import leak_report

    course, term = _course_with_prose(fixture_course, prose)
    verdicts = {
        "check's gate": release_leaks(course),
        "the release test": leak_report(course)["00_fixture"][1],
        "publish's calendar gate": shown_answers(course, ["01_second"], term, term.release["01_second"]),
    }
    agree = {rule: any(line[:40] in item for item in found) if line else found == []
             for rule, found in verdicts.items()}
    assert all(agree.values()), verdicts
