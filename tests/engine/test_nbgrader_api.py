"""The parts of nbgrader (and nbclient under it) that the grader relies on beyond its documented
API: each one exists and behaves as relied on. pyproject.toml bounds nbgrader below 0.10; an
upgrade that breaks one of these fails here, by name, rather than in a student's grade."""

from __future__ import annotations

import inspect

import nbformat
from nbclient import NotebookClient
from nbconvert.preprocessors import ClearMetadataPreprocessor
from nbgrader.api import Gradebook
from nbgrader.converters import Autograde
from nbgrader.coursedir import CourseDirectory
from nbgrader.preprocessors import (
    AssignLatePenalties,
    CheckCellMetadata,
    ClearHiddenTests,
    ClearOutput,
    DeduplicateIds,
    Execute,
    IgnorePattern,
    LimitOutput,
    OverwriteCells,
    OverwriteKernelspec,
    SaveAutoGrades,
)

from autograder.engine.drop_duplicate_cells import DropDuplicateCells
from autograder.engine.execute import GradingExecute
from autograder.engine.nbgrader_setup import load_config
from autograder.engine.neutralize_markers import NeutralizeMarkers
from autograder.engine.quiet_stderr import QuietStderr
from autograder.engine.restore_missing_cells import RestoreMissingCells


def test_clear_hidden_tests_removes_the_region_and_says_so():
    """HideHiddenTests calls ClearHiddenTests._remove_hidden_test_region(cell) -> bool."""
    cell = nbformat.v4.new_code_cell("visible = 1\n### BEGIN HIDDEN TESTS\nsecret = 2\n### END HIDDEN TESTS\n")
    step = ClearHiddenTests()
    assert step._remove_hidden_test_region(cell) is True
    assert "secret" not in cell.source and "visible = 1" in cell.source
    assert step._remove_hidden_test_region(nbformat.v4.new_code_cell("plain = 1")) is False


def test_our_pipelines_are_nbgraders_defaults_with_our_steps_in_place():
    """nbgrader_config.py lists both pipelines whole: a step nbgrader adds must be seen here."""
    sanitize = Autograde.class_traits()["sanitize_preprocessors"].default()
    autograde = Autograde.class_traits()["autograde_preprocessors"].default()
    assert sanitize == [ClearOutput, DeduplicateIds, OverwriteKernelspec, OverwriteCells, CheckCellMetadata]
    assert autograde == [Execute, IgnorePattern, ClearMetadataPreprocessor, LimitOutput, SaveAutoGrades,
                         AssignLatePenalties, CheckCellMetadata]
    config = load_config(".")
    assert config.Autograde.sanitize_preprocessors == [
        ClearOutput, DropDuplicateCells, OverwriteKernelspec, RestoreMissingCells, OverwriteCells,
        NeutralizeMarkers, CheckCellMetadata]
    assert config.Autograde.autograde_preprocessors == [GradingExecute, QuietStderr, *autograde[2:]]
    assert issubclass(QuietStderr, IgnorePattern)  # nbgrader's step, configured as nbgrader's


def test_the_traits_we_configure_exist():
    assert "add_missing_cells" in OverwriteCells.class_traits()
    assert "enabled" in RestoreMissingCells.class_traits()
    assert {"pattern", "enabled"} <= set(IgnorePattern.class_traits())
    assert {"max_lines", "max_traceback"} <= set(LimitOutput.class_traits())
    assert {"timeout", "interrupt_on_timeout", "raise_on_iopub_timeout", "shutdown_kernel"} <= set(
        Execute.class_traits())


def test_the_nbclient_internals_grading_execute_overrides_exist():
    """GradingExecute overrides _get_timeout and _async_handle_timeout and calls process_message."""
    assert issubclass(Execute, NotebookClient)
    for name, arguments in (("_get_timeout", ["cell"]), ("_async_handle_timeout", ["timeout", "cell"]),
                            ("process_message", ["msg", "cell", "cell_index"]),
                            ("create_kernel_manager", [])):
        method = getattr(NotebookClient, name)
        assert list(inspect.signature(method).parameters)[1:len(arguments) + 1] == arguments, name
    assert inspect.iscoroutinefunction(NotebookClient._async_handle_timeout)


def test_coursedir_formats_the_source_folder_as_restore_missing_cells_reads_it(tmp_path):
    coursedir = CourseDirectory(root=str(tmp_path))
    path = coursedir.format_path(coursedir.source_directory, ".", "01_x")
    assert path.replace("/./", "/") == str(tmp_path / "source" / "01_x")


def test_gradebook_grades_take_an_auto_score_and_commit_through_db(tmp_path):
    """engine.withdraw_points sets Grade.auto_score and commits with Gradebook.db.commit()."""
    with Gradebook(f"sqlite:///{tmp_path / 'gb.db'}", "c") as gb:
        gb.add_assignment("a")
        gb.add_notebook("a", "a")
        gb.add_grade_cell("t", "a", "a", max_score=1, cell_type="code")
        gb.add_student("s")
        gb.add_submission("a", "s")
        grade = gb.find_grade("t", "a", "a", "s")
        grade.auto_score = 1.0
        gb.db.commit()
        assert gb.find_grade("t", "a", "a", "s").score == 1.0
