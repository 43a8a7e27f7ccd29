"""The template: nbgrader's generation of the assignments, made once per command.

`build_template` runs `nbgrader generate_assignment` in a fresh course folder whose source/
links to the course's. What it leaves there serves everything else: the gradebook (every
grading job starts from a copy of it), the student versions (`release` normalizes them into
release/, `check` compares release/ with them), and the test cells' points.
"""

from __future__ import annotations

import shutil
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from autograder.course import exercises
from autograder.engine.nbgrader_setup import ensure_tools_on_path, load_config, nbgrader_log


@dataclass(frozen=True)
class AssignmentInfo:
    name: str
    exercises: exercises.Exercises  # its answers and tests (autograder/course/exercises.py)

    @property
    def max_score(self) -> float:
        return self.exercises.max_score


@dataclass(frozen=True)
class Template:
    """A course folder where nbgrader generated the assignments: gradebook.db, source/ (links to
    the course's folders), release/ (fresh student versions)."""

    dir: Path
    assignments: dict[str, AssignmentInfo]

    @property
    def gradebook(self) -> Path:
        return self.dir / "gradebook.db"

    def source_notebook(self, assignment: str) -> Path:
        return self.dir / "source" / assignment / f"{assignment}.ipynb"

    def release_notebook(self, assignment: str) -> Path:
        return self.dir / "release" / assignment / f"{assignment}.ipynb"


class GenerationError(RuntimeError):
    """nbgrader generate_assignment failed; the message holds its log."""


def course_from_template(course: Path, template_dir: Path, assignment: str, gradebook: Path) -> None:
    """Lay out a course folder of one job at `course`: source/<assignment> linked to the template's,
    and `gradebook` a copy of the template's gradebook (grading, and making feedback pages later)."""
    (Path(course) / "source").mkdir()
    (Path(course) / "source" / assignment).symlink_to(
        (Path(template_dir) / "source" / assignment).resolve(), target_is_directory=True)
    shutil.copyfile(Path(template_dir) / "gradebook.db", gradebook)


def new_gradebook(path: Path) -> None:
    """Create an empty nbgrader gradebook at `path`, as nbgrader would, without its subprocess.

    On a fresh database nbgrader runs `alembic heads` as a subprocess to stamp the schema
    version: seconds of interpreter start-up, and FileNotFoundError where alembic is not on
    PATH. The same head revision is read here, in-process, from nbgrader's migration scripts.
    """
    from alembic.script import ScriptDirectory
    from nbgrader.api import Base
    from nbgrader.dbutil import ALEMBIC_DIR
    from sqlalchemy import create_engine, text

    head = ScriptDirectory(ALEMBIC_DIR).get_current_head()
    engine = create_engine(f"sqlite:///{Path(path).resolve()}", future=True)
    try:
        Base.metadata.create_all(bind=engine)
        with engine.begin() as conn:
            conn.execute(text("CREATE TABLE alembic_version (version_num VARCHAR(32) NOT NULL)"))
            conn.execute(text("INSERT INTO alembic_version (version_num) VALUES (:v)"), {"v": head})
    finally:
        engine.dispose()


def build_template(source_dir: Path, assignments: Sequence[str], dest: Path) -> Template:
    """Run nbgrader generate_assignment for `assignments` in a fresh course folder `dest`."""
    from nbgrader.converters import GenerateAssignment
    from nbgrader.coursedir import CourseDirectory

    ensure_tools_on_path()
    dest = Path(dest).resolve()
    (dest / "source").mkdir(parents=True, exist_ok=True)
    infos = {}
    for assignment in assignments:
        link = dest / "source" / assignment
        if not link.exists():
            link.symlink_to(Path(source_dir).resolve() / assignment, target_is_directory=True)
        infos[assignment] = AssignmentInfo(assignment, exercises.of_notebook(link / f"{assignment}.ipynb"))
    new_gradebook(dest / "gradebook.db")
    config = load_config(dest)
    for assignment in assignments:
        with nbgrader_log("generate") as (logger, log):
            try:
                coursedir = CourseDirectory(config=config, log=logger)
                coursedir.assignment_id = assignment
                converter = GenerateAssignment(coursedir=coursedir, config=config, log=logger)
                converter.force = True
                converter.create_assignment = True
                converter.start()
            except Exception as error:
                raise GenerationError(f"nbgrader generate_assignment {assignment} failed: "
                                      f"{error}\n{log.getvalue()}") from None
    return Template(dest, infos)
