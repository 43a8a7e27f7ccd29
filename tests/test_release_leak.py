"""No answer can be read in the release notebooks (docs/design.md, Quality gates), by the one rule
of autograder/authoring/leaks.py that `check`'s gate 'no leaks' and `publish` apply too.

A secret statement of a solution or a hidden test that appears *anywhere* in a release notebook,
in a sentence of prose, a hint of a visible test or a docstring, lets the student copy the answer
instead of deriving it. Which statements are secret, why the threshold is zero, and the figures
measured before and after the rule became one: that module's doc. This test prints, for each
release notebook, how many of its assignment's answer lines are readable, and every readable one.
"""

from __future__ import annotations

import nbformat
import pytest

from autograder.authoring.leaks import answer_lines, readable, secrets, text_leaks
from autograder.course.layout import Course
from autograder.course.notebooks import notebook_text_lines, read_notebook
from autograder.course.settings import REPO_ROOT

COURSE = Course(REPO_ROOT)
ASSIGNMENTS = COURSE.assignments()


def _text(nb) -> str:
    return "\n".join(notebook_text_lines(nb))


def _own(found, course: Course, assignment: str) -> list[str]:
    """The secret statements that `assignment`'s source notebook is where they come from."""
    where = course.source_notebook(assignment).relative_to(course.root).as_posix() + ", "
    return [line for line, origin in found.lines.items() if origin.startswith(where)]


def leak_report(course: Course = COURSE) -> dict[str, tuple[int, list[str]]]:
    """assignment -> (the number of its answer lines, every answer line readable in its release
    notebook: its own and any other assignment's), as `check`'s gate finds them."""
    found = secrets(course)
    report = {}
    for assignment in course.assignments():
        text = _text(read_notebook(course.release_notebook(assignment)))
        shown = [leak.text for leak in text_leaks(assignment, text, found)
                 if leak.text in found.lines or leak.text in found.pieces]
        report[assignment] = (len(_own(found, course, assignment)), shown)
    return report


def test_no_answer_can_be_read_in_the_release(capsys):
    report = leak_report()
    total = sum(n for n, _ in report.values())
    leaked = sum(len(found) for _, found in report.values())
    with capsys.disabled():
        for assignment, (n, found) in report.items():
            print(f"\n{assignment}: {len(found)} answer lines readable in the release (of its {n})"
                  + "".join(f"\n    {line}" for line in found))
        print(f"\noverall: {leaked} of {total}")
    assert total > 0
    assert leaked == 0, (
        f"{leaked} answer line(s) can be read in release/ (the threshold is zero: "
        "autograder/authoring/leaks.py says why): "
        + "; ".join(f"{a}: {found}" for a, (_, found) in report.items() if found))


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_a_planted_leak_is_found(assignment):
    """A solution line pasted into a markdown sentence of the release counts as readable."""
    found = secrets(COURSE)
    release = read_notebook(COURSE.release_notebook(assignment))
    own = [line for line in _own(found, COURSE, assignment) if ", solution of " in found.lines[line]]
    before = readable(found.lines, _text(release))
    clean = [line for line in own if line not in before]
    assert clean, f"{assignment}: no unreadable solution line to plant"
    planted = clean[0]
    release.cells.append(nbformat.v4.new_markdown_cell(f"Hint: write `{planted}` and you are done."))
    after = readable(found.lines, _text(release))
    assert planted in after
    assert len(after) == len(before) + 1


def test_trivial_and_given_lines_do_not_count():
    source = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_code_cell("def f(x):\n    y = compute_the_thing(x)\n    ### BEGIN SOLUTION\n"
                                  "    y = compute_the_thing(x)  # given above\n    return y\n    # a comment\n"
                                  "    import numpy as np\n    return w1, w2\n\n    z = np.maximum(x, 0)\n    ### END SOLUTION\n",
                                  metadata={"nbgrader": {"solution": True, "grade_id": "f"}}),
    ])
    assert answer_lines(source) == ["z = np.maximum(x, 0)"]


def test_a_line_inside_a_longer_name_is_not_read_verbatim():
    lines = ["losses.append(loss.item())"]
    assert readable(lines, "expected_losses.append(loss.item())") == []
    assert readable(lines, "then `losses.append(loss.item())` and") == lines
