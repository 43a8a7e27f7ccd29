"""The wheel built for students holds the helpers and none of the answers."""

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


def answer_lines(root: Path = ROOT) -> set[str]:
    """Distinctive code lines from the solutions and hidden tests of every source notebook."""
    lines = set()
    for path in sorted((root / "source").glob("*/*.ipynb")):
        nb = nbformat.read(path, as_version=4)
        for cell in nb.cells:
            for block in SOLUTION.findall(cell.source) + HIDDEN.findall(cell.source):
                for line in block.splitlines():
                    line = line.strip()
                    # Short or generic lines (`return x`, `pass`, comments) prove nothing.
                    if len(line) >= 25 and not line.startswith("#"):
                        lines.add(line)
    return lines


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    return build_student_wheel(tmp_path_factory.mktemp("dist"))


def test_wheel_has_helpers_but_no_reference_and_no_autograder(wheel):
    names = zipfile.ZipFile(wheel).namelist()
    assert "helpers/__init__.py" in names
    assert "helpers/checks.py" in names
    assert not [n for n in names if n.startswith("helpers/reference")], names
    assert not [n for n in names if n.startswith("autograder")], names


def find_leaks(wheel_path: Path, lines: set[str]) -> list[tuple[str, str]]:
    """(line, file) for every answer line found in a .py file of the wheel."""
    with zipfile.ZipFile(wheel_path) as archive:
        texts = {n: archive.read(n).decode("utf-8", "replace") for n in archive.namelist() if n.endswith(".py")}
    return [(line, name) for line in sorted(lines) for name, text in texts.items() if line in text]


def test_wheel_contains_no_solution_or_hidden_test_line(wheel):
    lines = answer_lines()
    if not lines:
        pytest.skip("no source notebooks yet")
    leaks = find_leaks(wheel, lines)
    assert not leaks, f"answer lines found in the student wheel: {leaks[:5]}"


def test_the_leak_search_finds_a_planted_answer(wheel, tmp_path):
    """The search above can fail: the same wheel with one solution line added is caught."""
    lines = answer_lines()
    if not lines:
        pytest.skip("no source notebooks yet")
    planted = sorted(lines)[len(lines) // 2]
    bad = tmp_path / "bad.whl"
    with zipfile.ZipFile(wheel) as good, zipfile.ZipFile(bad, "w") as out:
        for item in good.infolist():
            out.writestr(item, good.read(item))
        out.writestr("helpers/oops.py", f"def f():\n    {planted}\n")
    assert find_leaks(bad, lines) == [(planted, "helpers/oops.py")]
