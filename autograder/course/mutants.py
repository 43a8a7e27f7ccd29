"""Mutants: known-wrong answers that the tests of an assignment must catch.

`grading/<assignment>/mutants/<slug>.py` (autograder/course/grading_folder.py, docs/authoring.md):

    \"\"\"grad_w1 without the transpose of x: x @ grad_h instead of x.T @ grad_h.\"\"\"
    # replaces: mlp_backward
    # caught by: test_mlp_backward, test_mlp_backward_hidden
    def mlp_backward(x, y, w1, w2, cache):
        ...

The docstring's first line says the mistake; `replaces` names a solution cell of the source
notebook; `caught by` names the test cells that must lose points; the rest of the file is the
whole new source of that solution cell.
"""

from __future__ import annotations

import ast
import copy
import re
from dataclasses import dataclass
from pathlib import Path

from nbformat import NotebookNode

from autograder.course.notebooks import cell_index, grade_id, is_solution, is_test

_HEADER = re.compile(r"^#\s*(replaces|caught by)\s*:\s*(.*?)\s*$")


class MutantError(ValueError):
    """A mutant file that does not follow the format, or names cells that do not exist."""


@dataclass(frozen=True)
class Mutant:
    path: Path
    mistake: str
    replaces: str
    caught_by: tuple[str, ...]
    code: str

    @property
    def name(self) -> str:
        return self.path.stem


def read_headed_file(path: Path, header_line: re.Pattern, error: type[Exception],
                     docstring_says: str) -> tuple[str, dict[str, str], str]:
    """A grading-folder file: a docstring, `# key: value` lines matching `header_line`, then code.

    Returns (the docstring's first line, {key: value}, the code); `error` names the file and the fix.
    """
    path = Path(path)
    text = path.read_text(encoding="utf-8")
    try:
        tree = ast.parse(text, filename=str(path))
    except SyntaxError as problem:
        raise error(f"{path}: not valid Python ({problem.msg}, line {problem.lineno})") from None
    docstring = ast.get_docstring(tree, clean=True)
    if not tree.body or not docstring or not docstring.strip():
        raise error(f"{path}: must open with a docstring whose first line says {docstring_says}")
    rest = text.splitlines()[tree.body[0].end_lineno:]
    header: dict[str, str] = {}
    start = len(rest)
    for index, line in enumerate(rest):
        match = header_line.match(line.strip())
        if match:
            header[match.group(1)] = match.group(2)
        elif line.strip():
            start = index
            break
    return docstring.strip().splitlines()[0], header, "\n".join(rest[start:]).strip("\n")


def parse_mutant(path: Path) -> Mutant:
    """Read one mutant file; MutantError says what is wrong with it and how to fix it."""
    path = Path(path)
    mistake, header, code = read_headed_file(path, _HEADER, MutantError, "the mistake")
    for key, example in (("replaces", "<solution grade_id>"), ("caught by", "<test grade_id>, ...")):
        if not header.get(key):
            raise MutantError(f"{path}: missing the line '# {key}: {example}' after the docstring")
    caught_by = tuple(part.strip() for part in header["caught by"].split(",") if part.strip())
    if not code.strip():
        raise MutantError(f"{path}: no code after the header; the rest of the file replaces the cell")
    return Mutant(path=path, mistake=mistake, replaces=header["replaces"],
                  caught_by=caught_by, code=code)


def load_mutants(mutants_dir: Path) -> list[Mutant]:
    """Every mutant in `mutants_dir` (grading/<assignment>/mutants/), sorted by name."""
    mutants_dir = Path(mutants_dir)
    if not mutants_dir.is_dir():
        return []
    return [parse_mutant(p) for p in sorted(mutants_dir.glob("*.py")) if p.name != "__init__.py"]


def check_mutant(mutant: Mutant, source_nb: NotebookNode) -> None:
    """Raise MutantError unless the cells the mutant names exist, in an order it can be caught."""
    solutions = {grade_id(c): i for i, c in enumerate(source_nb.cells) if is_solution(c)}
    tests = {grade_id(c): i for i, c in enumerate(source_nb.cells) if is_test(c)}
    if mutant.replaces not in solutions:
        raise MutantError(f"{mutant.path}: '# replaces: {mutant.replaces}' names no solution cell "
                          f"of the source notebook (solution cells: {', '.join(solutions) or 'none'})")
    for test in mutant.caught_by:
        if test not in tests:
            raise MutantError(f"{mutant.path}: '# caught by: {test}' names no test cell of the source "
                              f"notebook (test cells: {', '.join(tests) or 'none'})")
        if tests[test] < solutions[mutant.replaces]:
            raise MutantError(f"{mutant.path}: test cell {test} comes before the solution cell "
                              f"{mutant.replaces}, so it cannot see the mistake")
    try:
        compile(mutant.code, str(mutant.path), "exec")
    except SyntaxError as error:
        raise MutantError(f"{mutant.path}: the replacement code does not compile ({error.msg}); "
                          "a syntax error would be caught by every test and prove nothing") from None


def apply_mutant(source_nb: NotebookNode, mutant: Mutant, truncate: bool = True) -> NotebookNode:
    """A copy of the source notebook with the mutant in place of its solution cell.

    truncate: end the notebook after the last test cell the mutant names; later cells cannot
    change that test's score, and the run is shorter.
    """
    check_mutant(mutant, source_nb)
    nb = copy.deepcopy(source_nb)
    nb.cells[cell_index(nb, mutant.replaces)].source = mutant.code
    if truncate:
        last = max(cell_index(nb, test) for test in mutant.caught_by)
        nb.cells = nb.cells[:last + 1]
    return nb
