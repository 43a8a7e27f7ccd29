"""RestoreMissingCells: put back the test and read-only cells a student deleted, in their place.

Left out, nbgrader gives a deleted test no grade (None, "needs manual grading") without a word,
and its own `OverwriteCells.add_missing_cells` raises KeyError when the cell just before a
deleted one is a read-only cell, or was deleted too. This preprocessor, in Autograde's sanitize
pipeline before OverwriteCells (autograder/nbgrader_config.py), takes each missing cell from the
source notebook (`source/<assignment>/<notebook>.ipynb` of the course folder) and puts it in its
place. Solution cells are never restored: the source version holds the answer. OverwriteCells
then checks the restored cells against the gradebook like every locked cell. `enabled = False`
for notebooks cut short on purpose (a mutant is graded only up to the last test it names).

A cell is missing when no cell of the submission carries its grade_id. Some editors and
converters strip every cell's nbgrader metadata: the cells are all there, unlabelled. So the
submission's cells are first paired with the source's, in order (difflib): by grade_id where both
have one, else by their text (a test cell's as the student received it, without its hidden
tests). A missing cell paired with a cell of the submission takes that cell's place (its stripped
copy); one paired with none goes just before the cell paired with the nearest source cell after
it, so after every unpaired cell between (an unlabelled solution cell pairs with nothing: a test
put after the cell before it could run before the code it tests). Put at the top, every test of a
stripped notebook ran before that code (issue 39: a correct notebook scored 0).
"""

from __future__ import annotations

import copy
import difflib
from pathlib import Path

from nbformat import NotebookNode
from nbgrader.preprocessors import NbGraderPreprocessor

from autograder.course.notebooks import (
    HIDDEN_DELIMITERS,
    grade_id,
    is_solution,
    is_test,
    nbgrader,
    read_notebook,
    regions,
)


def _text(source: str) -> str:
    """A cell's text as pairing sees it: its non-blank lines, trailing spaces ignored."""
    return "\n".join(line.rstrip() for line in source.splitlines() if line.strip())


def _key(cell: NotebookNode, anchored: bool, as_released: bool) -> tuple:
    """What a cell is paired by: its grade_id where both notebooks have it (`anchored`), else its
    type and text (`as_released`: a source cell's text without its hidden tests, as students get it)."""
    if anchored:
        return ("id", grade_id(cell))
    text = "\n".join(regions(cell.source, *HIDDEN_DELIMITERS)[1]) if as_released else cell.source
    return (cell.cell_type, _text(text))


def _pairs(nb: NotebookNode, source_nb: NotebookNode) -> dict[int, NotebookNode]:
    """Source cell index -> the same cell in `nb`: by grade_id where both have it, else by text,
    aligned in order so that a repeated text pairs with the cell among the same neighbours. An
    unlabelled solution cell pairs with nothing: its text is the student's."""
    shared = ({grade_id(c) for c in nb.cells if grade_id(c)}
              & {grade_id(c) for c in source_nb.cells if grade_id(c)})
    source_keys = [("id", grade_id(c)) if grade_id(c) in shared
                   else ("solution", index) if is_solution(c)
                   else _key(c, False, as_released=True)
                   for index, c in enumerate(source_nb.cells)]
    keys = [_key(c, grade_id(c) in shared, as_released=False) for c in nb.cells]
    matcher = difflib.SequenceMatcher(None, source_keys, keys, autojunk=False)
    return {a + k: nb.cells[b + k] for a, b, size in matcher.get_matching_blocks() for k in range(size)}


def _position(nb: NotebookNode, cell: NotebookNode) -> int:
    return next(i for i, c in enumerate(nb.cells) if c is cell)


def restore_missing_cells(nb: NotebookNode, source_nb: NotebookNode) -> list[str]:
    """Put back the test and read-only cells of `source_nb` missing from `nb`, in place;
    returns their ids."""
    present = {grade_id(c) for c in nb.cells if grade_id(c)}
    paired = _pairs(nb, source_nb)
    restored = []
    for index, cell in enumerate(source_nb.cells):
        gid = grade_id(cell)
        if not gid or gid in present or is_solution(cell):
            continue
        if not (is_test(cell) or nbgrader(cell).get("locked")):
            continue
        cell = copy.deepcopy(cell)
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
        if index in paired:  # its copy, unlabelled: the source's cell in its place
            nb.cells[_position(nb, paired[index])] = cell
        else:
            after = next((i for i in range(index + 1, len(source_nb.cells)) if i in paired), None)
            nb.cells.insert(len(nb.cells) if after is None else _position(nb, paired[after]), cell)
        paired[index] = cell
        present.add(gid)
        restored.append(gid)
    return restored


def source_of(preprocessor: NbGraderPreprocessor, resources: dict) -> NotebookNode | None:
    """The source notebook of the submission a sanitize step of Autograde works on, None (and a
    line in nbgrader's log) when the course folder has none."""
    from nbgrader.coursedir import CourseDirectory

    info = resources["nbgrader"]
    coursedir = CourseDirectory(config=preprocessor.config)
    folder = Path(coursedir.format_path(coursedir.source_directory, ".", info["assignment"]))
    source = folder / f"{info['notebook']}.ipynb"
    if not source.is_file():
        preprocessor.log.warning("No source notebook at %s: deleted cells are not restored, "
                                 "every grade_id counts", source)
        return None
    return read_notebook(source)


class RestoreMissingCells(NbGraderPreprocessor):
    """Restore deleted test and read-only cells from the source notebook, in their place."""

    def preprocess(self, nb, resources):
        source_nb = source_of(self, resources)
        if source_nb is None:
            return nb, resources
        restored = restore_missing_cells(nb, source_nb)
        if restored:
            self.log.warning("Cells restored from the source (deleted, or their nbgrader metadata "
                             "stripped): %s", ", ".join(restored))
        return nb, resources
