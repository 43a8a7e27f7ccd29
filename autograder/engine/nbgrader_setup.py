"""nbgrader's configuration for one course folder: autograder/nbgrader_config.py, re-rooted.

Every nbgrader step here runs through nbgrader's Python API (its converters), never its
command line, and in a course folder of its own: a temporary one for each generation and for
each graded submission. The settings come from the one file; only the locations change.
"""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from io import StringIO
from pathlib import Path

from traitlets.config import Config, PyFileConfigLoader

CONFIG_FILE = Path(__file__).resolve().parents[1] / "nbgrader_config.py"


def ensure_tools_on_path() -> None:
    """Put this interpreter's bin/ first on PATH.

    A fresh gradebook makes nbgrader run `alembic` as a subprocess, found on PATH; from a
    Makefile or an IDE the virtual environment's bin/ is often not there
    (FileNotFoundError: 'alembic').
    """
    bin_dir = str(Path(sys.executable).parent)
    parts = os.environ.get("PATH", "").split(os.pathsep)
    if parts[:1] != [bin_dir]:
        os.environ["PATH"] = os.pathsep.join([bin_dir, *[p for p in parts if p != bin_dir]])


def load_config(course_dir: Path, *, db_path: Path | None = None, timeout: int | None = None,
                restore_missing_cells: bool = True, kernel_server: str | None = None,
                hide: Sequence[str | Path] = ()) -> Config:
    """The settings of nbgrader_config.py with the course folder at `course_dir`.

    db_path: the gradebook (default `course_dir/gradebook.db`); timeout: seconds per cell,
    overriding the file's; restore_missing_cells=False when a notebook is deliberately cut short
    (a mutant is graded only up to the last test it names); kernel_server: the socket of a
    kernel server (autograder/engine/kernel_server.py) to fork kernels from; hide: paths the grading
    kernels must not read (autograder/engine/sandbox.py), for cold and warm kernels alike.
    The pipelines (GradingExecute, the cell repairs) are the file's own: nothing here changes
    what `nbgrader autograde` does with that file as its configuration.
    """
    config = _file_config()
    course_dir = Path(course_dir).resolve()
    db_path = Path(db_path) if db_path is not None else course_dir / "gradebook.db"
    overrides = Config()
    overrides.CourseDirectory.root = str(course_dir)
    overrides.CourseDirectory.db_url = f"sqlite:///{db_path.resolve()}"
    # A job's folder is its own: plain nbgrader names inside it.
    overrides.CourseDirectory.submitted_directory = "submitted"
    overrides.CourseDirectory.autograded_directory = "autograded"
    overrides.CourseDirectory.feedback_directory = "feedback"
    if timeout is not None:
        overrides.Execute.timeout = int(timeout)
    overrides.RestoreMissingCells.enabled = bool(restore_missing_cells)
    overrides.GradingExecute.kernel_server = kernel_server or ""
    overrides.GradingExecute.hide = [str(Path(p)) for p in hide]
    config.merge(overrides)
    return config


def cell_timeout(timeout: int | None = None) -> int:
    """Seconds per cell a grading run gets: `timeout`, or nbgrader_config.py's."""
    if timeout is not None:
        return int(timeout)
    return int(_file_config().Execute.timeout)


def _file_config() -> Config:
    """nbgrader_config.py's settings, as nbgrader's CLI reads them."""
    return PyFileConfigLoader(CONFIG_FILE.name, path=str(CONFIG_FILE.parent)).load_config()


@contextmanager
def nbgrader_log(name: str) -> Iterator[tuple[logging.Logger, StringIO]]:
    """A private logger for one nbgrader converter, recording into a string.

    nbgrader logs every step; kept out of the terminal, the text is there for the record when
    something fails.
    """
    buffer = StringIO()
    logger = logging.getLogger(f"autograder.{name}.{id(buffer)}")
    handler = logging.StreamHandler(buffer)
    handler.setFormatter(logging.Formatter("[%(levelname)s] %(message)s"))
    logger.handlers, logger.propagate = [handler], False
    logger.setLevel(logging.INFO)
    try:
        yield logger, buffer
    finally:
        handler.close()
        logger.handlers = []
        logging.Logger.manager.loggerDict.pop(logger.name, None)
