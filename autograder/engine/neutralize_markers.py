"""NeutralizeMarkers: nbgrader's region markers in a student's own cells are text, never regions.

nbgrader finds its hidden-test regions by substring (`### BEGIN HIDDEN TESTS` anywhere in a line,
in any cell): the words in a student's markdown or code made GenerateFeedback fail the whole row
("No end hidden tests statement found") or cut the student's text out of the feedback. This
preprocessor, in Autograde's sanitize pipeline after the locked cells are restored
(autograder/nbgrader_config.py), puts a word joiner (U+2060, invisible) inside the marker words of
every cell that is not one of the course's test or locked cells: the student reads the same text,
nbgrader no longer sees a marker there.
"""

from __future__ import annotations

from nbformat import NotebookNode
from nbgrader.preprocessors import NbGraderPreprocessor

from autograder.course.notebooks import nbgrader

MARKERS = ("BEGIN HIDDEN TESTS", "END HIDDEN TESTS", "BEGIN SOLUTION", "END SOLUTION",
           "BEGIN MARK SCHEME", "END MARK SCHEME")
JOINER = "\u2060"


def _course_cell(cell: NotebookNode) -> bool:
    """A test or locked cell: its text is the course's (OverwriteCells restored it)."""
    meta = nbgrader(cell)
    return bool(meta.get("locked") or (meta.get("grade") and not meta.get("solution")))


def neutralize_markers(nb: NotebookNode) -> int:
    """Break the marker words in the student's cells, in place; returns how many cells changed."""
    changed = 0
    for cell in nb.cells:
        if _course_cell(cell):
            continue
        text = cell.source
        for marker in MARKERS:
            first, rest = marker.split(" ", 1)
            text = text.replace(marker, f"{first}{JOINER} {rest}")
        if text != cell.source:
            cell.source = text
            changed += 1
    return changed


class NeutralizeMarkers(NbGraderPreprocessor):
    """nbgrader's markers in a student's cells become plain text (see the module's docstring)."""

    def preprocess(self, nb, resources):
        if neutralize_markers(nb):
            self.log.warning("nbgrader markers in the student's own cells were made plain text")
        return nb, resources
