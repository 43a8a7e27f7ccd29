"""How much of each solution a student can read in the release notebook (docs/design.md: < 10 %).

The `no leaks` gate of `check` finds whole solution lines copied into the release. This test
measures the softer leak: a solution line that appears *anywhere* in the release, inside a
sentence of prose, a hint of a visible test or a docstring, so that the student can copy the
answer instead of deriving it.

What counts as a solution line (`answer_lines`), and why:
- every line between `### BEGIN SOLUTION` and `### END SOLUTION` of the source notebook,
  stripped, its inline comment dropped (text after two spaces and `#`, PEP 8's form), inner
  whitespace collapsed: the code, not its layout;
- not blank, not a comment: nothing to derive;
- at least MIN_CHARS characters and not an import or a `return` of plain names (`return
  losses`, `return w1, w2`): such lines say nothing without the lines that compute them;
- not also present in the notebook's given code (code cells outside the solution and hidden-test
  regions: setup and read-only cells, signatures, visible tests): the student is handed those
  lines as code anyway. Prose is not given code: a solution line quoted in markdown is a leak.

A line leaks when its normalized text appears in the release notebook's text (every cell's
source, whitespace collapsed, markdown backticks removed), not as the tail of a longer name -
read verbatim, wherever.
"""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest

from autograder.course.notebooks import HIDDEN_DELIMITERS, SOLUTION_DELIMITERS, _regions

ROOT = Path(__file__).resolve().parents[1]
ASSIGNMENTS = sorted(p.name for p in (ROOT / "source").iterdir() if p.is_dir())
LIMIT = 0.10  # docs/design.md, Quality gates: fewer than 10 % of the solution lines
MIN_CHARS = 12  # `return x`, `pass`, `losses = []`, `x = x.to(d)` say nothing alone

_INLINE_COMMENT = re.compile(r"\s{2,}#.*$")
_TRIVIAL = re.compile(r"^(return\s+[\w.]+(\s*,\s*[\w.]+)*|import\s.*|from\s+\S+\s+import\s.*)$")


def normalize(line: str) -> str:
    """One code line without its layout: stripped, inline comment dropped, whitespace collapsed."""
    return " ".join(_INLINE_COMMENT.sub("", line).split())


def _text(nb) -> str:
    """Everything a reader of the notebook sees, as one string with whitespace collapsed."""
    return " ".join(" ".join(cell.source.replace("`", "").split()) for cell in nb.cells)


def answer_lines(source_nb) -> list[str]:
    """The normalized, non-trivial solution lines of a source notebook (see the module docstring)."""
    inside, given = [], set()
    for cell in source_nb.cells:
        if cell.cell_type != "code":
            continue
        sol_in, sol_out, _ = _regions(cell.source, *SOLUTION_DELIMITERS)
        if cell.metadata.get("nbgrader", {}).get("solution"):
            inside += sol_in
        _, public, _ = _regions("\n".join(sol_out), *HIDDEN_DELIMITERS)
        given.update(normalize(line) for line in public)
    lines = [normalize(line) for line in inside]
    return [line for line in lines
            if line and not line.startswith("#") and len(line) >= MIN_CHARS
            and not _TRIVIAL.match(line) and line not in given]


def leaked_lines(source_nb, release_nb) -> tuple[list[str], list[str]]:
    """(solution lines, those of them that can be read verbatim in the release notebook)."""
    lines = answer_lines(source_nb)
    text = _text(release_nb)
    return lines, [line for line in lines if _verbatim(line.replace("`", "")).search(text)]


def _verbatim(line: str) -> re.Pattern:
    """`line` as a whole: not the tail of a longer name (`losses.append` inside `expected_losses.append`)."""
    return re.compile(r"(?<![\w.])" + re.escape(line) + r"(?!\w)")


def _notebooks(assignment: str):
    source = nbformat.read(ROOT / "source" / assignment / f"{assignment}.ipynb", as_version=4)
    release = nbformat.read(ROOT / "release" / assignment / f"{assignment}.ipynb", as_version=4)
    return source, release


def leak_report() -> dict[str, tuple[int, list[str]]]:
    """assignment -> (number of solution lines, the leaked ones)."""
    report = {}
    for assignment in ASSIGNMENTS:
        lines, leaked = leaked_lines(*_notebooks(assignment))
        report[assignment] = (len(lines), leaked)
    return report


def test_fewer_than_a_tenth_of_the_solution_lines_can_be_read_in_the_release(capsys):
    report = leak_report()
    total = sum(n for n, _ in report.values())
    leaked = sum(len(found) for _, found in report.values())
    with capsys.disabled():
        for assignment, (n, found) in report.items():
            print(f"\n{assignment}: {len(found)} of {n} solution lines readable in the release"
                  + "".join(f"\n    {line}" for line in found))
        print(f"\noverall: {leaked} of {total} = {leaked / total:.1%}")
    assert total > 0
    assert leaked / total < LIMIT, (
        f"{leaked} of {total} solution lines ({leaked / total:.0%}) can be read in release/: "
        + "; ".join(f"{a}: {found}" for a, (_, found) in report.items() if found))


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_a_planted_leak_is_found(assignment):
    """A solution line pasted into a markdown sentence of the release counts as leaked."""
    source, release = _notebooks(assignment)
    lines, leaked = leaked_lines(source, release)
    clean = [line for line in lines if line not in leaked]
    assert clean, f"{assignment}: no unleaked solution line to plant"
    planted = clean[0]
    release.cells.append(nbformat.v4.new_markdown_cell(f"Hint: write `{planted}` and you are done."))
    _, leaked_after = leaked_lines(source, release)
    assert planted in leaked_after
    assert len(leaked_after) == len(leaked) + 1


def test_trivial_and_given_lines_do_not_count():
    source = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_code_cell("def f(x):\n    y = compute_the_thing(x)\n    ### BEGIN SOLUTION\n"
                                  "    y = compute_the_thing(x)  # given above\n    return y\n    # a comment\n"
                                  "    import numpy as np\n\n    z = np.maximum(x, 0)\n    ### END SOLUTION\n",
                                  metadata={"nbgrader": {"solution": True, "grade_id": "f"}}),
    ])
    assert answer_lines(source) == ["z = np.maximum(x, 0)"]


def test_a_line_inside_a_longer_name_is_not_read_verbatim():
    assert _verbatim("losses.append(loss.item())").search("expected_losses.append(loss.item())") is None
    assert _verbatim("losses.append(loss.item())").search("then losses.append(loss.item()) and")
