"""A notebook's numbered sections run 1, 2, 3... without a gap, and a "section N" it names exists (issue 38, 3:
03's sections jumped from 6 to 8, and its hints sent the student to "section 8" and "section 9" for what
sections 7 and 8 say)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from autograder.course.notebooks import read_notebook

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "source").glob("*/*.ipynb")) + sorted((ROOT / "notebooks").glob("*.ipynb"))
HEADING = re.compile(r"^## (\d+)\.", re.M)
NAMED = re.compile(r"\bsections? (\d+)(?:-(\d+))?\b")


def sections(path: Path) -> list[int]:
    return [int(n) for c in read_notebook(path).cells if c.cell_type == "markdown" for n in HEADING.findall(c.source)]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_numbered_sections_have_no_gap(path):
    numbers = sections(path)
    assert numbers == list(range(1, len(numbers) + 1)), numbers


@pytest.mark.parametrize("path", [p for p in NOTEBOOKS if p.stem.startswith(("03_", "04_"))], ids=lambda p: p.stem)
def test_a_section_named_in_a_cell_exists(path):
    numbers = set(sections(path))
    named = {int(n) for c in read_notebook(path).cells for pair in NAMED.findall(c.source) for n in pair if n}
    assert named <= numbers, sorted(named - numbers)
