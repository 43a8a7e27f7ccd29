"""nbgrader's configuration for one course folder: the file's settings, re-rooted, and nothing else."""

from __future__ import annotations

import logging
import os
import sys
from pathlib import Path

from autograder.engine.nbgrader_setup import (
    _file_config,
    cell_timeout,
    ensure_tools_on_path,
    load_config,
    nbgrader_log,
)


def test_the_config_is_the_files_with_the_course_folder_and_the_jobs_choices(tmp_path):
    config = load_config(tmp_path, timeout=7, restore_missing_cells=False, kernel_server="/run/k.sock",
                         hide=[tmp_path / "grading"])
    assert config.CourseDirectory.root == str(tmp_path.resolve())
    assert config.CourseDirectory.db_url == f"sqlite:///{(tmp_path / 'gradebook.db').resolve()}"
    assert (config.CourseDirectory.submitted_directory, config.CourseDirectory.autograded_directory) == (
        "submitted", "autograded")
    assert config.Execute.timeout == 7 and config.RestoreMissingCells.enabled is False
    assert config.GradingExecute.kernel_server == "/run/k.sock"
    assert config.GradingExecute.hide == [str(tmp_path / "grading")]
    file = _file_config()
    assert config.Autograde.autograde_preprocessors == file.Autograde.autograde_preprocessors
    assert load_config(tmp_path, db_path=tmp_path / "other.db").CourseDirectory.db_url.endswith("/other.db")


def test_the_cell_timeout_is_the_files_unless_given():
    assert cell_timeout() == int(_file_config().Execute.timeout) > 0
    assert cell_timeout(3) == 3


def test_this_interpreters_bin_comes_first_on_path_once(monkeypatch):
    bin_dir = str(Path(sys.executable).parent)
    monkeypatch.setenv("PATH", os.pathsep.join(["/usr/bin", bin_dir, "/bin"]))
    ensure_tools_on_path()
    ensure_tools_on_path()
    assert os.environ["PATH"].split(os.pathsep) == [bin_dir, "/usr/bin", "/bin"]


def test_an_nbgrader_log_is_kept_in_a_string_and_its_logger_forgotten(capsys):
    with nbgrader_log("generate") as (logger, buffer):
        logger.info("generating 01_a")
        name = logger.name
    assert buffer.getvalue() == "[INFO] generating 01_a\n"
    assert capsys.readouterr() == ("", "")  # nothing reached the terminal
    assert name not in logging.Logger.manager.loggerDict
