"""HideHiddenTests: keep hidden tests out of the feedback a student receives.

nbgrader restores hidden tests into the autograded notebook (that is how they run), and its
feedback HTML shows that notebook as it is. This preprocessor, run by `generate_feedback`,
removes the hidden region from each test cell's source (nbgrader's ClearHiddenTests) and, for
the same cells, cuts each error's traceback down to its last line: IPython's traceback quotes
the failing test lines; anything else the cell printed goes too. What is left is what the
student needs, the check's message
("grad_w1 has shape (100, 1000); expected (1000, 100)...").
"""

from __future__ import annotations

from nbgrader.preprocessors import ClearHiddenTests
from traitlets import Bool


class HideHiddenTests(ClearHiddenTests):
    """ClearHiddenTests for feedback: also reduce the tracebacks of hidden tests to their message."""

    # A stray delimiter in a non-grade cell must not make feedback generation fail.
    enforce_metadata = Bool(False).tag(config=True)

    def preprocess_cell(self, cell, resources, cell_index):
        if cell.cell_type != "code":
            return super().preprocess_cell(cell, resources, cell_index)
        if self._remove_hidden_test_region(cell):
            # Only the verdict stays: what a hidden test printed, or what a student's hook
            # (pre_run_cell, an input transformer) printed while it ran, could quote its code.
            kept = []
            for output in cell.get("outputs", []):
                if output.get("output_type") == "error":
                    message = f"{output.get('ename', 'Error')}: {output.get('evalue', '')}"[:300]
                    output["evalue"] = message.split(": ", 1)[-1]
                    output["traceback"] = [message, "(the hidden test's code is not shown)"]
                    kept.append(output)
            cell["outputs"] = kept
        return cell, resources
