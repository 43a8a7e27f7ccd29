"""The one leak search (autograder/authoring/leaks.py), as `check`'s gate, `publish` and the share test use it."""

from __future__ import annotations

import nbformat
import pytest

from autograder.authoring.leaks import find_leaks, secrets
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
