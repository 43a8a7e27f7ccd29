"""Points are stated once, in nbgrader metadata; the intro table and `summary(...)` are checked against it.

An exercise is a solution cell's `grade_id`; its points are the sum of `nbgrader.points` over the
test cells named `test_<exercise>` or `test_<exercise>_<anything>` (the longest exercise name
wins, so `test_relu_training` belongs to `relu`, not to a shorter name): the exercise model's
name rule (autograder/course/exercises.py, `Exercises.points`).

Two other places show points, and `disagreements` compares both with the metadata:

- the **intro table**: a markdown table whose header starts with `exercise` and has a `points`
  column; its first column names the exercise in backticks (`` `relu(h)` ``, `` `Adam` ``, or a
  pattern such as `` `answer_*` `` standing for the sum of the exercises it matches). A table
  without a `points` column states no points and is not compared.
- the **summary cell**: the dict literal passed to `summary(...)`. A key is an exercise's name,
  optionally followed by a space and a qualifier (`"Sigmoid saves its output"`); the points of
  the keys of one exercise add up to that exercise's points.

Typical use::

    problems = disagreements(read_notebook(path), "01_numpy_mlp")
    # [Disagreement(notebook='01_numpy_mlp', exercise='relu', where='summary', stated=3, metadata=2)]
"""

from __future__ import annotations

import ast
import fnmatch
import re
from typing import NamedTuple

from nbformat import NotebookNode

from autograder.course import exercises

MISSING = None  # `stated` or `metadata` of an exercise that one side does not name


class Disagreement(NamedTuple):
    """One exercise whose points differ between the metadata and another place."""

    notebook: str
    exercise: str
    where: str  # "intro table" or "summary"
    stated: float | None  # what that place says; None when it does not name the exercise
    metadata: float | None  # what the test cells' nbgrader.points add up to; None: no such exercise

    def __str__(self) -> str:
        def show(value):
            return "nothing" if value is None else f"{value:g}"
        return (f"{self.notebook}: {self.exercise}: the {self.where} says {show(self.stated)} points, "
                f"the test cells' nbgrader metadata {show(self.metadata)}")


_ROW = re.compile(r"^\s*\|(.*)\|\s*$")


def _cells_of(row: str) -> list[str]:
    return [c.strip() for c in _ROW.match(row).group(1).split("|")]


def table_points(nb: NotebookNode) -> dict[str, float] | None:
    """name or pattern -> points, from the first markdown table with `exercise` and `points` columns.

    None when no table states points.
    """
    for cell in nb.cells:
        if cell.cell_type != "markdown":
            continue
        lines = cell.source.splitlines()
        for i, line in enumerate(lines):
            if not _ROW.match(line):
                continue
            header = [h.lower() for h in _cells_of(line)]
            if not header or header[0] != "exercise" or "points" not in header:
                continue
            column = header.index("points")
            stated: dict[str, float] = {}
            for row in lines[i + 2:]:
                if not _ROW.match(row):
                    break
                cells = _cells_of(row)
                name = re.match(r"`([\w*]+)", cells[0])
                if name is None:
                    raise ValueError(f"intro table row {row!r}: name the exercise in backticks")
                try:
                    stated[name.group(1)] = float(cells[column])
                except (IndexError, ValueError):
                    raise ValueError(f"intro table row {row!r}: the points column is not a number") from None
            return stated
    return None


def summary_points(nb: NotebookNode) -> dict[str, float] | None:
    """The dict literal passed to summary(...) in the notebook's code, or None when there is none."""
    for cell in nb.cells:
        if cell.cell_type != "code" or "summary(" not in cell.source:
            continue
        try:
            tree = ast.parse(cell.source)
        except SyntaxError:
            continue
        for node in ast.walk(tree):
            if (isinstance(node, ast.Call) and node.args
                    and getattr(node.func, "attr", getattr(node.func, "id", None)) == "summary"):
                return {str(k): float(v) for k, v in ast.literal_eval(node.args[0]).items()}
    return None


def _compare(notebook: str, where: str, stated: dict[str, float], actual: dict[str, float],
             group) -> list[Disagreement]:
    """Disagreements between `stated` (each key mapped onto exercises by `group`) and `actual`.

    A key naming one exercise adds to that exercise's total; a key matching several (a pattern
    such as `answer_*`) is compared with the sum of their points.
    """
    found: list[Disagreement] = []
    totals: dict[str, float] = {}
    covered: set[str] = set()
    for key, value in stated.items():
        owners = group(key)
        covered.update(owners)
        if not owners:
            found.append(Disagreement(notebook, key, where, value, MISSING))
        elif len(owners) == 1:
            totals[owners[0]] = totals.get(owners[0], 0.0) + value
        elif abs(value - sum(actual[o] for o in owners)) > 1e-9:
            found.append(Disagreement(notebook, key, where, value, sum(actual[o] for o in owners)))
    for name, points in actual.items():
        if name not in covered:
            found.append(Disagreement(notebook, name, where, MISSING, points))
        elif name in totals and abs(totals[name] - points) > 1e-9:
            found.append(Disagreement(notebook, name, where, totals[name], points))
    return found


def disagreements(nb: NotebookNode, notebook: str,
                  model: exercises.Exercises | None = None) -> list[Disagreement]:
    """Every exercise whose points in the intro table or the summary differ from the metadata."""
    model = model or exercises.read(nb)
    actual = model.points()
    found = [Disagreement(notebook, test_id, "test cells", MISSING, MISSING) for test_id in model.orphans()]
    table = table_points(nb)
    if table is not None:
        found += _compare(notebook, "intro table", table, actual,
                          lambda key: [n for n in actual if fnmatch.fnmatchcase(n, key)])
    summary = summary_points(nb)
    if summary is not None:
        found += _compare(notebook, "summary", summary, actual,
                          lambda key: [key.split(" ")[0]] if key.split(" ")[0] in actual else [])
    return found
