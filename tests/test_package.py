"""The package's own start-up: what importing autograder does before any command runs."""

from __future__ import annotations

import subprocess
import sys

READS_A_NOTEBOOK = """
import sys
import autograder.course.notebooks
import nbformat
bad = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("x = 1")])
bad.cells[0]["execution_count"] = "one"
try:
    nbformat.validate(bad)
    print("valid")
except nbformat.ValidationError:
    print("invalid")
print(sys.modules.get("rfc3987_syntax", "absent"))
"""


def test_reading_a_notebook_skips_jsonschemas_grammar_and_still_validates():
    """jsonschema's rfc3987_syntax (a Lark grammar built at import, about 1.2 s of CPU per process)
    is not imported by the grader's processes, and nbformat's validator still rejects a bad notebook."""
    out = subprocess.run([sys.executable, "-c", READS_A_NOTEBOOK], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["invalid", "None"]
