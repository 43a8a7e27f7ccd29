"""DropDuplicateCells: a grade_id twice in a submission keeps its first cell; the copies go.

nbgrader's DeduplicateIds keeps the *last* copy's metadata and leaves the earlier copies in the
notebook as plain cells that still run: a copied test cell placed above the real one would then
run first. This preprocessor, in Autograde's sanitize pipeline in its place
(autograder/nbgrader_config.py), removes every later copy instead; nbgrader then checks the
cell that stays against the gradebook like every locked cell.

Only the source notebook's grade_ids count. Any other is the student's own text (it was seen as
ANSI escapes that cleared the instructor's screen): ignored here as nbgrader's OverwriteCells
ignores it (it drops the id and the cell runs as a plain one), so it is never dropped for, never
named in a warning, never a key.
"""

from __future__ import annotations

from nbformat import NotebookNode
from nbgrader.preprocessors import NbGraderPreprocessor

from autograder.course.notebooks import grade_id
from autograder.engine.restore_missing_cells import source_of


def drop_duplicate_cells(nb: NotebookNode, source_nb: NotebookNode | None) -> list[str]:
    """Remove every cell whose grade_id, one of `source_nb`'s, an earlier cell has, in place;
    returns those ids. source_nb None (no source found): every grade_id counts."""
    known = None if source_nb is None else {grade_id(c) for c in source_nb.cells} - {None}
    seen: set[str] = set()
    dropped: list[str] = []
    for cell in list(nb.cells):
        gid = grade_id(cell)
        if not isinstance(gid, str) or (known is not None and gid not in known):
            continue
        if gid in seen:
            nb.cells.remove(cell)
            dropped.append(gid)
        else:
            seen.add(gid)
    return dropped


class DropDuplicateCells(NbGraderPreprocessor):
    """Keep the first cell of each grade_id of the source (nbgrader's DeduplicateIds keeps the last)."""

    def preprocess(self, nb, resources):
        dropped = drop_duplicate_cells(nb, source_of(self, resources))
        if dropped:
            self.log.warning("Duplicated cells dropped (the first copy is graded): %s", ", ".join(dropped))
        return nb, resources
