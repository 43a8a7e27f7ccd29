"""The package's own start-up: what importing autograder does before any command runs."""

from __future__ import annotations

import json
import os
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




STARTS_A_COMMAND = """
import contextlib, io, json, sys
from autograder.__main__ import main
usage = io.StringIO()
with contextlib.redirect_stdout(usage), contextlib.suppress(SystemExit):
    main(sys.argv[1:] + ["--help"])
print(json.dumps([usage.getvalue(), sorted(sys.modules)]))
"""
COMMAND_MODULES = ("autograder.authoring.check", "autograder.authoring.publish", "autograder.batch.grade",
                   "autograder.classroom.collect", "autograder.classroom.export",
                   "autograder.classroom.feedback")


def test_a_command_imports_its_own_module_alone():
    """`python -m autograder export ...` imported every command, nbgrader and torch with them: 2.2
    CPU-s before its first line. Each imports its own module now, and its options are there."""
    def start(*argv: str) -> tuple[set[str], str]:
        out = subprocess.run([sys.executable, "-c", STARTS_A_COMMAND, *argv], capture_output=True,
                             text=True, timeout=120)
        assert out.returncode == 0, out.stderr[-2000:]
        usage, modules = json.loads(out.stdout)
        return {m for m in (*COMMAND_MODULES, "nbgrader", "torch") if m in modules}, usage

    imported, usage = start("export")
    assert imported == {"autograder.classroom.export"} and "--roster" in usage
    imported, usage = start("--root", "check", "collect")  # the folder named check is --root's
    assert imported == {"autograder.classroom.collect"} and "--from" in usage
    imported, usage = start("grade")
    assert imported == {"autograder.batch.grade", "nbgrader"} and "--jobs" in usage


LEAVES = """
import atexit, tempfile, autograder.__main__ as command
class Kept:
    def __del__(self):
        print("torn down", flush=True)
kept = Kept()  # a module's object: the interpreter's teardown deletes it, os._exit does not
folder = tempfile.TemporaryDirectory()  # removed by an exit function, as at any exit
atexit.register(print, folder.name, flush=True)
print("said")  # buffered (stdout is a pipe), not flushed yet
import threading, time
threading.Thread(target=lambda: (time.sleep(0.3), print("joined"))).start()  # joined, as at any exit
command.leave(3)
"""


def test_a_command_leaves_after_the_exit_functions_without_the_interpreters_teardown():
    """With torch loaded, the teardown of every module took 1-2 CPU-s at the end of each command
    that grades; what an exit must do (exit functions, temporary folders, buffered output) still happens."""
    out = subprocess.run([sys.executable, "-c", LEAVES], capture_output=True, text=True, timeout=120)
    assert out.returncode == 3, out.stderr
    said, joined, folder = out.stdout.split()
    assert (said, joined) == ("said", "joined") and "torn down" not in out.stdout
    assert not os.path.exists(folder), "the temporary folder outlived the command"
