"""Whether the course's files agree with `[tool.course]` and `[project] version`.

The setup cell of every notebook (source/, release/, notebooks/) must be the template's
(autograder/authoring/setup_cell_head.py) for the course's wheel URL, and README.md's generated
blocks what `[tool.course]` gives. `configure` rewrites them and `make test` fails while one
disagrees; `publish` refuses to write a student tree from a course that disagrees.
"""

from __future__ import annotations

import re
from pathlib import Path

from autograder.authoring.readme import stale_blocks
from autograder.authoring.setup_cell import (
    SetupCellError,
    first_code_cell,
    render_head,
    rewrite_setup_cell,
)
from autograder.course.layout import Course
from autograder.course.notebooks import read_notebook
from autograder.course.settings import CourseSettings, SettingsError, course_settings

_WHEEL = re.compile(r"https://\S+?\.whl")


def _setup_cell_problem(path: Path, where: str, head: str, settings: CourseSettings) -> str | None:
    """Why the notebook at `path` disagrees with the setup head, or None if it agrees."""
    try:
        cell = first_code_cell(read_notebook(path), where)
        if rewrite_setup_cell(cell.source, head, where) == cell.source:
            return None
    except SetupCellError as error:
        return str(error)
    except Exception as error:
        return f"{where}: not a readable notebook ({type(error).__name__}: {error})"
    found = _WHEEL.search(cell.source.split("device = helpers.setup()")[0])
    if found and found.group(0) != settings.wheel_url:
        return f"{where}: its setup cell installs {found.group(0)}; [tool.course] gives {settings.wheel_url}"
    return (f"{where}: its setup cell differs from the template autograder/authoring/setup_cell_head.py "
            f"(for {settings.wheel_url})")


def notebook_paths(course: Course, release: bool = True) -> list[Path]:
    """Every notebook that carries a setup cell: source/, release/ (unless not `release`), notebooks/."""
    paths = [course.source_notebook(a) for a in course.assignments()]
    if release and course.release_dir.is_dir():
        paths += sorted(course.release_dir.glob("*/*.ipynb"))
    return paths + sorted((course.root / "notebooks").glob("*.ipynb"))


def disagreements(course: Course, release: bool = True) -> list[str]:
    """Each file of `course` that disagrees with [tool.course] and [project] version, and how.

    release=False leaves release/ out (publish generates it afresh from source/).
    """
    try:
        settings = course_settings(course.root)
    except SettingsError as error:
        return [str(error)]
    head = render_head(settings)
    problems = []
    for path in notebook_paths(course, release):
        where = path.relative_to(course.root).as_posix()
        problem = _setup_cell_problem(path, where, head, settings)
        if problem:
            problems.append(problem)
    readme = course.root / "README.md"
    if readme.is_file():
        stale = stale_blocks(readme.read_text(encoding="utf-8"), course, settings)
        problems += [f"README.md: the generated block {name!r} (between `<!-- begin {name}` and "
                     f"`<!-- end {name} -->`) differs from what [tool.course] gives"
                     for name in stale]
    return problems
