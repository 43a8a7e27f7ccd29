"""What `python -m autograder --help` and a command's `--help` say is what the commands do."""

from __future__ import annotations

import contextlib
import io

import pytest

from autograder.__main__ import COMMANDS, main


def usage(*argv: str) -> str:
    text = io.StringIO()
    with contextlib.redirect_stdout(text), pytest.raises(SystemExit):
        main([*argv, "--help"])
    return " ".join(text.getvalue().split())  # argparse wraps at the terminal's width


def test_the_help_names_every_command_in_its_description():
    """Before, its first lines named 7 of the 13: `{release,check,grade,bench,configure,publish,wheel}`."""
    description = usage().split("positional arguments")[0]
    assert [name for name in COMMANDS if name not in description] == []
    assert len(COMMANDS) == 13


def test_grade_says_what_it_grades_when_no_assignment_is_named():
    """grade grades the assignments SUBMITTED holds (grade.py's docstring, batch/grade.py selected
    by handed_in); its ASSIGNMENT help said 'default: every folder of source/'."""
    text = usage("grade")
    assert "every folder of source/" not in text and "every one in source/" not in text
    assert "(default: the assignments SUBMITTED holds for at least one student" in text
