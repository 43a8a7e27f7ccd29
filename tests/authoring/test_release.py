"""`python -m autograder release`: validation, normalization, byte-stable generation, no leaks.

nbgrader generate_assignment runs here (a few seconds), no kernel does.
"""

from __future__ import annotations

import json

import nbformat
import pytest
from nbformat.v4 import new_output

from autograder.__main__ import main
from autograder.authoring.check import release_leaks
from autograder.authoring.student_release import generate_release, release
from autograder.course.notebooks import grade_id, read_notebook, write_notebook

pytestmark = pytest.mark.slow


def snapshot(folder):
    return {p.relative_to(folder): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_release_writes_student_notebooks_without_answers(fixture_course, capsys):
    assert main(["release", "--root", str(fixture_course.root)]) == 0
    assert "Released 1 assignment(s)" in capsys.readouterr().out
    nb = read_notebook(fixture_course.release_notebook("00_fixture"))
    cells = {grade_id(c): c.source for c in nb.cells}
    assert "raise NotImplementedError()" in cells["scale"]
    assert "return x * factor" not in cells["scale"]
    assert "x_hidden" not in cells["test_scale_hidden"]
    assert cells["test_scale"].startswith('"""scale multiplies')  # visible tests stay
    assert release_leaks(fixture_course) == []


def test_release_is_byte_stable_and_equals_a_fresh_generation(fixture_course, tmp_path):
    release(fixture_course)
    first = snapshot(fixture_course.release_dir) | snapshot(fixture_course.source_dir)
    assert release(fixture_course) == []  # nothing changed the second time
    assert snapshot(fixture_course.release_dir) | snapshot(fixture_course.source_dir) == first
    generate_release(fixture_course, ["00_fixture"], tmp_path / "fresh")
    assert snapshot(tmp_path / "fresh") == snapshot(fixture_course.release_dir)


def test_release_strips_outputs_from_source_in_place(fixture_course):
    path = fixture_course.source_notebook("00_fixture")
    nb = read_notebook(path)
    nb.cells[0].outputs = [new_output("stream", name="stdout", text="Using CPU\n")]
    nb.cells[0].execution_count = 1
    nb.metadata["widgets"] = {"state": {}}
    write_notebook(nb, path)
    changed = release(fixture_course)
    assert "source/00_fixture/00_fixture.ipynb" in changed
    raw = json.loads(path.read_text())
    assert all(c.get("outputs", []) == [] and c.get("execution_count") is None for c in raw["cells"])
    assert "widgets" not in raw["metadata"]


def test_release_removes_files_nbgrader_did_not_generate(fixture_course):
    release(fixture_course)
    stray = fixture_course.release_dir / "00_fixture" / "old_data.csv"
    stray.write_text("1,2\n")
    assert "release/00_fixture/old_data.csv (removed)" in release(fixture_course)
    assert not stray.exists()


def test_an_invalid_source_stops_the_release_naming_notebook_and_cell(fixture_course, capsys):
    path = fixture_course.source_notebook("00_fixture")
    nb = read_notebook(path)
    test_cell = next(c for c in nb.cells if grade_id(c) == "test_scale")
    del test_cell.metadata["nbgrader"]["points"]
    next(c for c in nb.cells if grade_id(c) == "test_mean_square").metadata["nbgrader"][
        "grade_id"] = "test_scale"
    write_notebook(nb, path)
    before = path.read_bytes()
    assert main(["release", "--root", str(fixture_course.root)]) == 2
    out = capsys.readouterr().out
    assert "nothing was written" in out
    assert "source/00_fixture/00_fixture.ipynb, cell 4 (grade_id 'test_scale'): test cell without points" in out
    assert "cell 7 (grade_id 'test_scale'): duplicate grade_id 'test_scale'" in out
    assert not fixture_course.release_dir.exists()
    assert path.read_bytes() == before


def test_the_leak_gate_catches_a_solution_in_the_release(fixture_course):
    """The no-solution gate of tests/test_pipeline.py can fail: paste an answer into a release."""
    release(fixture_course)
    path = fixture_course.release_notebook("00_fixture")
    nb = nbformat.read(path, as_version=4)
    next(c for c in nb.cells if grade_id(c) == "scale").source = (
        "def scale(x, factor):\n    return x * factor")
    next(c for c in nb.cells if grade_id(c) == "test_mean_square_hidden").source += (
        "\ncheck_close(mean_square(np.array([-2.0, 0.0, 2.0, 4.0])), 6.0, \"mean_square([-2, 0, 2, 4])\",")
    nbformat.write(nb, path)
    leaks = release_leaks(fixture_course)
    assert any(leak.startswith("release/00_fixture/00_fixture.ipynb: 'return x * factor' from source/")
               for leak in leaks)
    assert any("check_close(mean_square(np.array([-2.0, 0.0, 2.0, 4.0]))" in leak for leak in leaks)


@pytest.mark.parametrize("argv", [["--help"], ["release", "--help"], ["check", "--help"],
                                  ["grade", "--help"]])
def test_every_command_has_help(argv, capsys):
    with pytest.raises(SystemExit) as exit_:
        main(argv)
    assert exit_.value.code == 0
    out = capsys.readouterr().out
    assert "usage: python -m autograder" in out and "--root" in out


def test_an_unknown_assignment_is_a_clear_error(fixture_course, capsys):
    assert main(["release", "--root", str(fixture_course.root), "99_nothing"]) == 2
    assert "no assignment 99_nothing" in capsys.readouterr().err
