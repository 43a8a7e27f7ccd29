"""The wheel built for students holds the helpers and none of the answers.

An answer is a run of consecutive code lines from a solution or a hidden test in `source/`;
single generic lines (`return torch.device("cpu")`) are shared with the helpers by design.
"""

from __future__ import annotations

import re
import zipfile
from pathlib import Path

import nbformat
import pytest

from autograder.wheel import build_student_wheel

ROOT = Path(__file__).resolve().parent.parent
SOLUTION = re.compile(r"### BEGIN SOLUTION\n(.*?)### END SOLUTION", re.S)
HIDDEN = re.compile(r"### BEGIN HIDDEN TESTS\n(.*?)### END HIDDEN TESTS", re.S)


WINDOW = 4  # consecutive code lines that, found together, mean a copied answer
MIN_CHARS = 40  # shorter windows (`return x`, one-word lines) prove nothing


def _code_lines(text: str) -> list[str]:
    """Stripped lines that carry code: no blanks, no comments."""
    return [line.strip() for line in text.splitlines() if line.strip() and not line.strip().startswith("#")]


def answer_windows(root: Path = ROOT) -> set[str]:
    """Every run of WINDOW consecutive code lines from the solutions and hidden tests of `source/`."""
    windows = set()
    for path in sorted((root / "source").glob("*/*.ipynb")):
        nb = nbformat.read(path, as_version=4)
        for cell in nb.cells:
            for block in SOLUTION.findall(cell.source) + HIDDEN.findall(cell.source):
                lines = _code_lines(block)
                for i in range(max(1, len(lines) - WINDOW + 1)):
                    window = "\n".join(lines[i:i + WINDOW])
                    if len(window) >= MIN_CHARS:
                        windows.add(window)
    return windows


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    return build_student_wheel(tmp_path_factory.mktemp("dist"))


def test_wheel_has_helpers_but_no_reference_and_no_autograder(wheel):
    names = zipfile.ZipFile(wheel).namelist()
    assert "helpers/__init__.py" in names
    assert "helpers/checks.py" in names
    assert not [n for n in names if n.startswith("helpers/reference")], names
    assert not [n for n in names if n.startswith("autograder")], names


def find_leaks(wheel_path: Path, windows: set[str]) -> list[tuple[str, str]]:
    """(window, file) for every answer window found in a .py file of the wheel."""
    with zipfile.ZipFile(wheel_path) as archive:
        texts = {n: "\n".join(_code_lines(archive.read(n).decode("utf-8", "replace")))
                 for n in archive.namelist() if n.endswith(".py")}
    return [(w, name) for w in sorted(windows) for name, text in texts.items() if w in text]


def test_wheel_contains_no_solution_or_hidden_test_line(wheel):
    lines = answer_windows()
    if not lines:
        pytest.skip("no source notebooks yet")
    leaks = find_leaks(wheel, lines)
    assert not leaks, f"answer lines found in the student wheel: {leaks[:5]}"


def test_the_leak_search_finds_a_planted_answer(wheel, tmp_path):
    """The search above can fail: the same wheel with one solution window added is caught."""
    lines = answer_windows()
    if not lines:
        pytest.skip("no source notebooks yet")
    planted = sorted(lines)[len(lines) // 2]
    bad = tmp_path / "bad.whl"
    with zipfile.ZipFile(wheel) as good, zipfile.ZipFile(bad, "w") as out:
        for item in good.infolist():
            out.writestr(item, good.read(item))
        out.writestr("helpers/oops.py", "def f():\n" + "".join(f"    {line}\n" for line in planted.splitlines()))
    assert find_leaks(bad, lines) == [(planted, "helpers/oops.py")]
