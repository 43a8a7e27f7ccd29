"""QuietStderr: nbgrader's IgnorePattern, which first notes the test cells nbgrader itself would fail.

A test cell fails by raising; what it writes to stderr (a torch FutureWarning, a tqdm bar) says
nothing about the answer, so grading drops it before scoring (IgnorePattern, configured in
autograder/nbgrader_config.py). But nbgrader's own rule (`utils.determine_grade`, what `nbgrader
validate` - a student's Validate button - and a plain `nbgrader autograde` apply) zeroes any test
cell that wrote to stderr. This step applies that rule to each test cell's raw outputs before the
drop and writes the grade ids of the cells that only the drop saved to `record` (a JSON list, in
the job's private folder, which no kernel sees). `check` fails the source notebook on any of them:
a right answer must pass nbgrader's validator as it is (issue 20, §4).
"""

from __future__ import annotations

import json
from pathlib import Path

from nbformat import NotebookNode
from nbgrader import utils
from nbgrader.preprocessors import IgnorePattern
from traitlets import Unicode


def _fails(cell: NotebookNode, log) -> bool:
    score, max_score = utils.determine_grade(cell, log)
    return score is not None and score < max_score


class QuietStderr(IgnorePattern):
    record = Unicode("", help="Write here (JSON) the grade ids of the test cells that nbgrader's "
                     "own rule fails only for what they wrote to stderr; empty: nowhere").tag(config=True)

    def preprocess(self, nb: NotebookNode, resources: dict):
        self._saved: list[str] = []
        nb, resources = super().preprocess(nb, resources)
        if self.record:
            Path(self.record).write_text(json.dumps(self._saved))
        return nb, resources

    def preprocess_cell(self, cell: NotebookNode, resources: dict, index: int):
        test = cell.cell_type == "code" and utils.is_grade(cell)
        failed = test and _fails(cell, self.log)
        cell, resources = super().preprocess_cell(cell, resources, index)
        if failed and not _fails(cell, self.log):
            self._saved.append(cell.metadata["nbgrader"]["grade_id"])
        return cell, resources
