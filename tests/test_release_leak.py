"""How much of each solution a student can read in the release notebook (docs/design.md: < 10 %).

The `no leaks` gate of `check` and `publish`'s search find whole answer lines and windows copied
into what students receive. This test measures the softer leak with the same search
(autograder/authoring/leaks.py, `readable`): a telling solution line that appears *anywhere* in
the release, inside a sentence of prose, a hint of a visible test or a docstring, so that the
student can copy the answer instead of deriving it. Which lines count, and why, is that module's
doc: one rule for all three.
"""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest

from autograder.authoring.leaks import answer_lines, readable

ROOT = Path(__file__).resolve().parents[1]
ASSIGNMENTS = sorted(p.name for p in (ROOT / "source").iterdir() if p.is_dir())
LIMIT = 0.10  # docs/design.md, Quality gates: fewer than 10 % of the solution lines
leaked_lines = readable


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
                                  "    import numpy as np\n    return w1, w2\n\n    z = np.maximum(x, 0)\n    ### END SOLUTION\n",
                                  metadata={"nbgrader": {"solution": True, "grade_id": "f"}}),
    ])
    assert answer_lines(source) == ["z = np.maximum(x, 0)"]


def test_a_line_inside_a_longer_name_is_not_read_verbatim():
    source = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(
        "def f(losses, loss):\n    ### BEGIN SOLUTION\n    losses.append(loss.item())\n    ### END SOLUTION\n",
        metadata={"nbgrader": {"solution": True, "grade_id": "f"}})])

    def release(prose):
        return nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell(prose)])

    assert readable(source, release("expected_losses.append(loss.item())"))[1] == []
    assert readable(source, release("then `losses.append(loss.item())` and"))[1] == ["losses.append(loss.item())"]
