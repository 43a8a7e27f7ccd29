"""helpers.checks' summary tells the truth about the last run of every visible check (issue 38, 3).

A student ran a test cell, saw ✔, changed the answer, ran the cell again and saw it fail: the summary
kept the ✔ (passed() recorded passes only), and said 31/40 where the grader gave 17/40. Each test here
runs cells in a real IPython shell, as Jupyter and Colab do.
"""

from __future__ import annotations

import pytest
from IPython.core.interactiveshell import InteractiveShell

from helpers import checks

TEST_CELL = '''"""relu: the visible check."""
check_true(relu(-1.0) == 0.0, "relu(-1) is not 0.")
passed("relu")'''
SUMMARY = 'summary({"relu": 2, "mlp_backward": 4, "answer_x": 1, "train": 3})'


@pytest.fixture
def shell(monkeypatch):
    """An IPython shell with the checks imported as a notebook's setup cell does, and a fresh record."""
    monkeypatch.setattr(checks, "_outcomes", {})
    ip = InteractiveShell.instance()
    ip.run_cell("from helpers import checks\nchecks.watch_cells()\n"
                "from helpers.checks import answer_recorded, check_true, passed, summary")
    yield ip
    InteractiveShell.clear_instance()


def run(ip, source: str, capsys) -> str:
    capsys.readouterr()
    ip.run_cell(source)
    return capsys.readouterr().out


def test_a_check_that_fails_after_it_passed_is_shown_failed(shell, capsys):
    run(shell, "def relu(h):\n    return max(h, 0.0)", capsys)
    assert "\u2714 relu" in run(shell, TEST_CELL, capsys)
    run(shell, "def relu(h):\n    return h", capsys)  # the student changes the answer and runs the test again
    run(shell, TEST_CELL, capsys)
    out = run(shell, SUMMARY, capsys)
    relu_line = next(line for line in out.splitlines() if line.strip().startswith("relu"))
    assert "failed" in relu_line and "\u2714" not in relu_line, out
    assert "Visible checks passed for 0 of 4 exercises (0 of 10 points at stake)" in out


def test_not_run_failed_error_and_passed_are_told_apart(shell, capsys):
    run(shell, "def relu(h):\n    return max(h, 0.0)", capsys)
    run(shell, TEST_CELL, capsys)
    run(shell, '"""mlp_backward."""\nraise TypeError("unsupported operand")\npassed("mlp_backward")', capsys)
    run(shell, '"""train."""\ncheck_true(False, "the loss went up.")\npassed("train")', capsys)
    out = run(shell, SUMMARY, capsys)
    lines = {line.split()[0]: line for line in out.splitlines() if line.startswith("  ")}
    assert "\u2714 passed" in lines["relu"]
    assert "error" in lines["mlp_backward"] and "TypeError" in lines["mlp_backward"]
    assert "failed" in lines["train"]
    assert "not run" in lines["answer_x"]
    assert "Visible checks passed for 1 of 4 exercises (2 of 10 points at stake)" in out


def test_a_recorded_answer_whose_form_check_then_fails_is_no_longer_recorded(shell, capsys):
    run(shell, 'answer_x = 3\ncheck_true(isinstance(answer_x, int), "an int")\nanswer_recorded("answer_x")', capsys)
    assert "answer recorded" in run(shell, SUMMARY, capsys)
    run(shell, 'answer_x = "3"\ncheck_true(isinstance(answer_x, int), "an int")\nanswer_recorded("answer_x")',
        capsys)
    out = run(shell, SUMMARY, capsys)
    line = next(line for line in out.splitlines() if line.strip().startswith("answer_x"))
    assert "failed" in line and "recorded" not in line, out


def test_watching_twice_records_each_run_once(shell, capsys):
    shell.run_cell("checks.watch_cells()")  # a notebook whose setup cell ran twice
    handlers = [cb for cb in shell.events.callbacks["post_run_cell"] if getattr(cb, "__name__", "") == "_after_cell"]
    assert len(handlers) == 1
