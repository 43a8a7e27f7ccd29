"""The setup cell's head (autograder/authoring/setup_cell_head.py), run as a student's notebook runs it:
where `helpers` is missing, on Colab and off it, and in IPython, which shows the failure as one line."""

from __future__ import annotations

import subprocess
import sys
import types

import pytest

from autograder.authoring.setup_cell import render_head
from autograder.course.settings import CourseSettings

SETTINGS = CourseSettings("my-uni/dl-course", "main", "0.3.0")


def run_head(monkeypatch, *, colab: bool, pip_returncode: int = 1, pip_stderr: str = ""):
    """Execute the rendered setup head where `helpers` is not installed; returns the pip calls."""
    calls = []

    def fake_pip(argv, **kwargs):
        calls.append(argv)
        if pip_returncode == 0:  # the install worked: helpers is importable again
            monkeypatch.delitem(sys.modules, "helpers")
        return subprocess.CompletedProcess(argv, pip_returncode, "", pip_stderr)

    monkeypatch.setitem(sys.modules, "helpers", None)  # `import helpers` raises ModuleNotFoundError
    if colab:
        monkeypatch.setitem(sys.modules, "google.colab", types.ModuleType("google.colab"))
    monkeypatch.setattr(subprocess, "run", fake_pip)
    namespace: dict = {}
    try:
        exec(compile(render_head(SETTINGS), "<setup cell>", "exec"), namespace)
    finally:
        namespace.clear()
    return calls


def test_on_colab_a_missing_wheel_stops_with_one_line_saying_what_the_student_can_do(monkeypatch):
    """issue 39, 10: the line a student read told the instructor what to run."""
    stderr = ("ERROR: HTTP error 404 while getting https://github.com/my-uni/...\n"
              "ERROR: Could not install requirement from URL (404 Not Found)")
    with pytest.raises(Exception) as raised:
        run_head(monkeypatch, colab=True, pip_stderr=stderr)
    error = raised.value
    assert type(error).__name__ == "SetupError" and not isinstance(error, ImportError)
    lines = error._render_traceback_()  # what Jupyter and Colab show instead of a traceback
    assert len(lines) == 1 and "\n" not in lines[0]
    line = lines[0]
    assert SETTINGS.wheel_url in line and "404 Not Found" in line  # for the instructor they tell
    assert "Run this cell again" in line and "Runtime > Disconnect and delete runtime" in line
    assert "Tell your instructor" in line
    assert "python -m autograder" not in line and "Instructor:" not in line


def test_on_colab_the_wheel_comes_from_the_configured_url(monkeypatch):
    calls = run_head(monkeypatch, colab=True, pip_returncode=0)
    assert calls == [[sys.executable, "-m", "pip", "install", "--quiet", SETTINGS.wheel_url]]


def test_off_colab_the_cell_installs_nothing_and_says_what_to_run(monkeypatch):
    with pytest.raises(Exception, match=r"run  pip install https://github.com/my-uni/dl-course/"
                                        r"releases/download/v0.3.0/") as raised:
        run_head(monkeypatch, colab=False)
    assert type(raised.value).__name__ == "SetupError"


def test_ipython_shows_the_failure_as_its_one_line(monkeypatch, capsys):
    from IPython.core.interactiveshell import InteractiveShell

    monkeypatch.setitem(sys.modules, "helpers", None)
    monkeypatch.setitem(sys.modules, "google.colab", types.ModuleType("google.colab"))
    monkeypatch.setattr(subprocess, "run", lambda argv, **kw: subprocess.CompletedProcess(
        argv, 1, "", "ERROR: No connection"))
    import builtins

    added = {"__IPYTHON__", "display"} - set(vars(builtins))  # what the shell leaves in builtins
    shell = InteractiveShell.instance()
    try:
        result = shell.run_cell(render_head(SETTINGS))
    finally:  # later tests in this process must not find a shell (helpers render for IPython then)
        InteractiveShell.clear_instance()
        for name in added:
            vars(builtins).pop(name, None)
    shown = [line for line in capsys.readouterr().out.splitlines() if line.strip()]
    assert not result.success
    assert len(shown) == 1 and shown[0].startswith("The course's helpers package could not be"), shown
    assert shown[0].endswith("(pip: ERROR: No connection)")
