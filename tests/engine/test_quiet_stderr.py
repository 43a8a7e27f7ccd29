"""QuietStderr: stderr dropped before scoring, after noting the test cells nbgrader's own rule would fail."""

from __future__ import annotations

import json

from nbformat.v4 import new_code_cell, new_notebook, new_output
from traitlets.config import Config

from autograder.engine.quiet_stderr import QuietStderr


def grade_cell(gid: str, *outputs):
    return new_code_cell("check()", outputs=list(outputs), metadata={
        "nbgrader": {"grade": True, "solution": False, "grade_id": gid, "points": 2}})


WARNING = new_output("stream", name="stderr", text="FutureWarning: something in torch\n")
ERROR = new_output("error", ename="AssertionError", evalue="wrong", traceback=["AssertionError: wrong"])


def test_the_cells_saved_only_by_the_drop_are_recorded_and_stderr_goes(tmp_path):
    record = tmp_path / "saved.json"
    step = QuietStderr(config=Config({"QuietStderr": {"enabled": True, "pattern": r"[\s\S]",
                                                      "record": str(record)}}))
    nb = new_notebook(cells=[
        grade_cell("test_warns", WARNING),  # right, but wrote to stderr: nbgrader would fail it
        grade_cell("test_fails", WARNING, ERROR),  # wrong anyway: not saved by the drop
        grade_cell("test_quiet", new_output("stream", name="stdout", text="ok\n")),
        new_code_cell("print('x', file=sys.stderr)", outputs=[WARNING]),  # no test: not recorded
    ])
    nb, _ = step.preprocess(nb, {})
    assert json.loads(record.read_text()) == ["test_warns"]
    assert all(o.get("name") != "stderr" for cell in nb.cells for o in cell.outputs)
    assert nb.cells[1].outputs[0].output_type == "error"


def test_without_a_record_nothing_is_written_and_the_drop_still_happens(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    step = QuietStderr(config=Config({"QuietStderr": {"pattern": r"[\s\S]"}}))
    nb, _ = step.preprocess(new_notebook(cells=[grade_cell("test_warns", WARNING)]), {})
    assert nb.cells[0].outputs == [] and list(tmp_path.iterdir()) == []
