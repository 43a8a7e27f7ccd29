"""RestoreMissingCells: put back the test and read-only cells a student deleted, in their place.

Left out, nbgrader gives a deleted test no grade (None, "needs manual grading") without a word,
and its own `OverwriteCells.add_missing_cells` raises KeyError when the cell just before a
deleted one is a read-only cell, or was deleted too. This preprocessor, in Autograde's sanitize
pipeline before OverwriteCells (autograder/nbgrader_config.py), takes each missing cell from the
source notebook (`source/<assignment>/<notebook>.ipynb` of the course folder) and puts it right
after the nearest cell that precedes it there and is still in the submission. Solution cells are
never restored: the source version holds the answer. OverwriteCells then checks the restored
cells against the gradebook like every locked cell. `enabled = False` for notebooks cut short on
purpose (a mutant is graded only up to the last test it names).
"""

from __future__ import annotations

import copy
from pathlib import Path

from nbformat import NotebookNode
from nbgrader.preprocessors import NbGraderPreprocessor

from autograder.course.notebooks import grade_id, is_solution, is_test, nbgrader, read_notebook


def restore_missing_cells(nb: NotebookNode, source_nb: NotebookNode) -> list[str]:
    """Put back the test and read-only cells of `source_nb` missing from `nb`, in place;
    returns their ids."""
    present = {grade_id(c) for c in nb.cells if grade_id(c)}
    restored = []
    for index, cell in enumerate(source_nb.cells):
        gid = grade_id(cell)
        if not gid or gid in present or is_solution(cell):
            continue
        if not (is_test(cell) or nbgrader(cell).get("locked")):
            continue
        position = 0
        for previous in reversed(source_nb.cells[:index]):
            pid = grade_id(previous)
            if pid and pid in present:
                position = next(i for i, c in enumerate(nb.cells) if grade_id(c) == pid) + 1
                break
        cell = copy.deepcopy(cell)
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
        nb.cells.insert(position, cell)
        present.add(gid)
        restored.append(gid)
    return restored


class RestoreMissingCells(NbGraderPreprocessor):
    """Restore deleted test and read-only cells from the source notebook, in their place."""

    def preprocess(self, nb, resources):
        from nbgrader.coursedir import CourseDirectory

        info = resources["nbgrader"]
        coursedir = CourseDirectory(config=self.config)
        folder = Path(coursedir.format_path(coursedir.source_directory, ".", info["assignment"]))
        source = folder / f"{info['notebook']}.ipynb"
        if not source.is_file():
            self.log.warning("No source notebook at %s: deleted cells are not restored", source)
            return nb, resources
        restored = restore_missing_cells(nb, read_notebook(source))
        if restored:
            self.log.warning("Deleted cells restored from the source: %s", ", ".join(restored))
        return nb, resources
