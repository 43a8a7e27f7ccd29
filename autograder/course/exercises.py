"""The exercise model: what a source notebook asks for and how it is tested, read once.

Every place that needs an assignment's exercises reads them here (the template's points, the
trusted run's "which test needs which answer", `check`'s gates, Gradescope's tests, the feedback
page's titles, the points table), so that no two of them can disagree:

- an **answer** is a solution cell with a `grade_id`: the top-level names its code defines
  (`relu`, `Sigmoid`; autograder/course/cell_code.py) and the title a student reads for it;
- a **test** is an autograded test cell: its points (nbgrader metadata), the first line of its
  docstring, whether it holds hidden tests, and the answer it belongs to, by two rules that must
  agree: by **name** (`test_<answer>` or `test_<answer>_<anything>`, the longest answer's name
  winning: the points' rule, autograder/course/points.py) and by **place** (the nearest solution
  cell above it: the trusted run's rule, which runs a test's answer from that cell). `misplaced`
  names each test where they differ; `check` fails its gate 'tests' on any.

Typical use::

    model = exercises.of_notebook(course.source_notebook("03_custom_functions"))
    model.points()      # {"sigmoid": 3.0, ...}: answer grade_id -> its tests' points
    model.needs()       # {"test_sigmoid": ["Sigmoid"], ...}: test grade_id -> names it runs
"""

from __future__ import annotations

import ast
import functools
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType

from nbformat import NotebookNode

from autograder.course.cell_code import defined_names
from autograder.course.notebooks import (
    HIDDEN_DELIMITERS,
    grade_id,
    is_solution,
    is_test,
    nbgrader,
    read_notebook,
)


@dataclass(frozen=True)
class Answer:
    """A solution cell: what the student writes."""

    grade_id: str
    names: tuple[str, ...]  # the top-level names its code defines, sorted (none for markdown)
    title: str  # what a student reads for it: "Your answer: relu", "Your answer 3"


@dataclass(frozen=True)
class Test:
    """An autograded test cell."""

    grade_id: str
    points: float
    title: str  # the first line of its docstring; "" when it has none
    hidden: bool  # holds an nbgrader hidden-tests region
    named: str | None  # its answer by name (test_<answer>[_...]); None: no answer has that name
    follows: str | None  # its answer by place: the nearest solution code cell above; None: none


@dataclass(frozen=True)
class Exercises:
    """An assignment's answers and tests, in notebook order."""

    answers: Mapping[str, Answer]  # read-only views: one model is shared by its readers
    tests: Mapping[str, Test]

    @classmethod
    def of(cls, answers: dict[str, Answer], tests: dict[str, Test]) -> Exercises:
        return cls(MappingProxyType(dict(answers)), MappingProxyType(dict(tests)))

    def __reduce__(self):  # a read-only view does not pickle; a template travels to worker processes
        return Exercises.of, (dict(self.answers), dict(self.tests))

    @property
    def max_score(self) -> float:
        return sum(t.points for t in self.tests.values())

    def test_points(self) -> dict[str, float]:
        """test grade_id -> points, in notebook order."""
        return {gid: t.points for gid, t in self.tests.items()}

    def points(self) -> dict[str, float]:
        """answer grade_id -> the points of the tests named after it (0 for an untested answer)."""
        points = dict.fromkeys(self.answers, 0.0)
        for test in self.tests.values():
            if test.named is not None:
                points[test.named] += test.points
        return points

    def orphans(self) -> list[str]:
        """Tests that no answer's name claims (their points appear in no table or summary)."""
        return [gid for gid, t in self.tests.items() if t.named is None]

    def misplaced(self) -> list[str]:
        """One line per test whose name credits another answer than the one above it."""
        return [f"{gid} is {t.named}'s test by its name but follows "
                + (f"the solution cell {t.follows}: rename it test_{t.follows}_... or move it under {t.named}"
                   if t.follows else f"no solution cell: move it under {t.named}")
                for gid, t in self.tests.items() if t.named is not None and t.named != t.follows]

    def solutions(self) -> dict[str, list[str]]:
        """answer grade_id -> the names it defines (the trusted run's exercises)."""
        return {gid: list(a.names) for gid, a in self.answers.items()}

    def needs(self) -> dict[str, list[str]]:
        """test grade_id -> the names of the answer it follows: the exercises whose failure in the
        trusted run withdraws its points."""
        return {gid: list(self.answers[t.follows].names) if t.follows else []
                for gid, t in self.tests.items()}

    def defining(self, name: str) -> str | None:
        """The grade_id of the last solution cell that defines `name` (the definition later cells use)."""
        found = [gid for gid, answer in self.answers.items() if name in answer.names]
        return found[-1] if found else None

    def names(self) -> set[str]:
        """Every name an answer defines, private helpers (_name) left out: what a probe must cover."""
        return {n for a in self.answers.values() for n in a.names if not n.startswith("_")}

    def tests_of(self, answer: str) -> list[str]:
        """The tests named after `answer` (grade_id), in notebook order."""
        return [gid for gid, t in self.tests.items() if t.named == answer]

    def titles(self) -> dict[str, str]:
        """grade_id -> what a student reads for it: a test's docstring line ("Test 3" without one),
        an answer's title."""
        titles = {gid: t.title or f"Test {n}" for n, (gid, t) in enumerate(self.tests.items(), 1)}
        return titles | {gid: a.title for gid, a in self.answers.items()}


def named_after(test_id: str, answers) -> str | None:
    """The answer a test's grade_id names: the longest answer name with test_<name>[_...]."""
    owners = [n for n in answers if test_id == f"test_{n}" or test_id.startswith(f"test_{n}_")]
    return max(owners, key=len) if owners else None


def docstring_title(source: str) -> str:
    """The first line of the docstring a cell's code opens with; '' when there is none."""
    try:
        tree = ast.parse(source)
    except SyntaxError:  # a hidden region or IPython magic: read the first line instead
        match = re.match(r'\s*[rRuU]?("""|\'\'\'|"|\')\s*(.+?)\s*(\1|$)', source)
        return match.group(2).strip() if match else ""
    doc = ast.get_docstring(tree) or ""
    return doc.strip().splitlines()[0].strip() if doc.strip() else ""


def _defined_name(source: str) -> str:
    match = re.search(r"^\s*(?:def|class)\s+(\w+)", source, flags=re.M)
    return match.group(1) if match else ""


def read(nb: NotebookNode) -> Exercises:
    """The model of a source notebook."""
    cells = [c for c in nb.cells if is_solution(c) and grade_id(c)]
    answers: dict[str, Answer] = {}
    for number, cell in enumerate(cells, 1):
        code = cell.cell_type == "code"
        name = _defined_name(cell.source) if code else ""
        answers[grade_id(cell)] = Answer(
            grade_id(cell), tuple(sorted(defined_names(cell.source))) if code else (),
            f"Your answer: {name}" if name else f"Your answer {number}")
    tests: dict[str, Test] = {}
    above = None
    for cell in nb.cells:
        if cell.cell_type == "code" and is_solution(cell):
            above = grade_id(cell)
        elif is_test(cell):
            gid = grade_id(cell)
            tests[gid] = Test(gid, float(nbgrader(cell).get("points", 0)), docstring_title(cell.source),
                              HIDDEN_DELIMITERS[0] in cell.source, named_after(gid, answers), above)
    return Exercises.of(answers, tests)


def of_notebook(path: Path) -> Exercises:
    """The model of the notebook at `path`, read once while the file is unchanged."""
    stat = Path(path).stat()
    return _cached(str(Path(path).resolve()), stat.st_mtime_ns, stat.st_size)


@functools.lru_cache(maxsize=64)
def _cached(path: str, mtime_ns: int, size: int) -> Exercises:
    return read(read_notebook(Path(path)))
