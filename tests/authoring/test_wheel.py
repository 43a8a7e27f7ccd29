"""The wheel built for students holds the helpers and none of the answers.

An answer is a run of consecutive code lines from a solution or a hidden test in `source/`;
single generic lines (`return torch.device("cpu")`) are shared with the helpers by design.
The search is autograder/authoring/leaks.py's, the one `publish` runs on the student repository.
"""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest

from autograder.authoring.leaks import answer_windows, code_lines
from autograder.authoring.wheel import build_student_wheel
from autograder.course.settings import course_settings

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    return build_student_wheel(tmp_path_factory.mktemp("dist"), ROOT)


def test_wheel_has_helpers_but_no_reference_and_no_autograder(wheel):
    names = zipfile.ZipFile(wheel).namelist()
    assert "helpers/__init__.py" in names
    assert "helpers/checks.py" in names
    assert not [n for n in names if n.startswith("helpers/reference")], names
    assert not [n for n in names if n.startswith("autograder")], names


def test_the_wheel_is_the_file_the_setup_cells_install(wheel):
    assert wheel.name == course_settings(ROOT).wheel_name
    assert course_settings(ROOT).wheel_url.endswith("/" + wheel.name)


def find_leaks(wheel_path: Path, windows: set[str]) -> list[tuple[str, str]]:
    """(window, file) for every answer window found in a .py file of the wheel."""
    with zipfile.ZipFile(wheel_path) as archive:
        texts = {n: "\n".join(code_lines(archive.read(n).decode("utf-8", "replace")))
                 for n in archive.namelist() if n.endswith(".py")}
    return [(w, name) for w in sorted(windows) for name, text in texts.items() if w in text]


def test_wheel_contains_no_solution_or_hidden_test_line(wheel):
    lines = answer_windows(ROOT / "source")
    if not lines:
        pytest.skip("no source notebooks yet")
    leaks = find_leaks(wheel, lines)
    assert not leaks, f"answer lines found in the student wheel: {leaks[:5]}"


def test_the_leak_search_finds_a_planted_answer(wheel, tmp_path):
    """The search above can fail: the same wheel with one solution window added is caught."""
    lines = answer_windows(ROOT / "source")
    if not lines:
        pytest.skip("no source notebooks yet")
    planted = sorted(lines)[len(lines) // 2]
    bad = tmp_path / "bad.whl"
    with zipfile.ZipFile(wheel) as good, zipfile.ZipFile(bad, "w") as out:
        for item in good.infolist():
            out.writestr(item, good.read(item))
        out.writestr("helpers/oops.py", "def f():\n" + "".join(f"    {line}\n" for line in planted.splitlines()))
    assert find_leaks(bad, lines) == [(planted, "helpers/oops.py")]
