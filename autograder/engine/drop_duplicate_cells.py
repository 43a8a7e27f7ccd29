"""DropDuplicateCells: a grade_id twice in a submission keeps its first cell; the copies go.

nbgrader's DeduplicateIds keeps the *last* copy's metadata and leaves the earlier copies in the
notebook as plain cells that still run: a copied test cell placed above the real one would then
run first. This preprocessor, in Autograde's sanitize pipeline in its place
(autograder/nbgrader_config.py), removes every later copy instead; nbgrader then checks the
cell that stays against the gradebook like every locked cell.
"""

from __future__ import annotations

from nbformat import NotebookNode
from nbgrader.preprocessors import NbGraderPreprocessor

from autograder.course.notebooks import grade_id


def drop_duplicate_cells(nb: NotebookNode) -> list[str]:
    """Remove every cell whose grade_id an earlier cell has, in place; returns those ids."""
    seen: set[str] = set()
    dropped: list[str] = []
    for cell in list(nb.cells):
        gid = grade_id(cell)
        if gid and gid in seen:
            nb.cells.remove(cell)
            dropped.append(gid)
        elif gid:
            seen.add(gid)
    return dropped


class DropDuplicateCells(NbGraderPreprocessor):
    """Keep the first cell of each grade_id (nbgrader's DeduplicateIds keeps the last)."""

    def preprocess(self, nb, resources):
        dropped = drop_duplicate_cells(nb)
        if dropped:
            self.log.warning("Duplicated cells dropped (the first copy is graded): %s", ", ".join(dropped))
        return nb, resources
