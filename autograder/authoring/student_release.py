"""source/ -> release/ with nbgrader: what the `release` command does, and what `new`, `configure`
and `publish` do when they release (autograder/authoring/release.py is the command line).

1. Validate every source notebook (duplicate grade_ids, test cells without points, solution
   cells without grade_id, solution or hidden-test regions in the wrong cells); any error
   stops the release before anything is written.
2. Normalize the source notebooks in place: the setup cell's head from the course template
   (autograder/authoring/setup_cell.py), no outputs, no execution counts, no volatile metadata.
3. `nbgrader generate_assignment` in a temporary course folder, then the same normalization of
   its output into release/, so that regenerating an unchanged source changes no byte.
"""

from __future__ import annotations

import filecmp
import shutil
import tempfile
from pathlib import Path

from autograder.authoring import exercise_table
from autograder.authoring.setup_cell import SetupCellError, apply_setup_cell, setup_head
from autograder.course.layout import Course
from autograder.course.notebooks import normalize, read_notebook, validate_source, write_notebook
from autograder.engine.template import build_template


class SourceError(Exception):
    """The source notebooks cannot be released; `errors` says where and why."""

    def __init__(self, errors: list[str]):
        super().__init__("\n".join(errors))
        self.errors = errors


def prepare_sources(course: Course, assignments: list[str]) -> list[str]:
    """Validate, then normalize the source notebooks in place; returns the ones that changed.

    Raises SourceError listing every problem in every notebook; nothing is written then.
    """
    errors: list[str] = []
    notebooks = {}
    for assignment in assignments:
        path = course.source_notebook(assignment)
        where = str(path.relative_to(course.root))
        try:
            nb = read_notebook(path)
        except Exception as error:
            errors.append(f"{where}: not a readable notebook ({type(error).__name__}: {error})")
            continue
        problems = validate_source(nb, where)
        try:
            apply_setup_cell(nb, setup_head(course.root), where)
        except SetupCellError as error:
            problems.append(str(error))
        errors.extend(problems)
        notebooks[path] = normalize(nb)
    if errors:
        raise SourceError(errors)
    return [str(p.relative_to(course.root)) for p, nb in notebooks.items() if write_notebook(nb, p)]


def generate_release(course: Course, assignments: list[str], out_dir: Path) -> list[str]:
    """Generate the student versions of `assignments` into `out_dir/<assignment>/`, normalized.

    Each assignment folder ends up holding exactly what nbgrader generated (stale files go);
    returns the paths, relative to `out_dir`, that changed.
    """
    out_dir = Path(out_dir)
    (course.build_dir / "work").mkdir(parents=True, exist_ok=True)
    changed: list[str] = []
    with tempfile.TemporaryDirectory(prefix="release-", dir=course.build_dir / "work") as tmp:
        template = build_template(course.source_dir, assignments, Path(tmp))
        for assignment in assignments:
            generated = template.dir / "release" / assignment
            target = out_dir / assignment
            wanted = {p.relative_to(generated) for p in generated.rglob("*") if p.is_file()}
            for rel in sorted(wanted):
                src, dst = generated / rel, target / rel
                if src.suffix == ".ipynb":
                    if write_notebook(normalize(read_notebook(src)), dst):
                        changed.append(str(Path(assignment) / rel))
                elif not (dst.is_file() and filecmp.cmp(src, dst, shallow=False)):
                    dst.parent.mkdir(parents=True, exist_ok=True)
                    shutil.copyfile(src, dst)
                    changed.append(str(Path(assignment) / rel))
            if target.is_dir():
                for path in sorted(target.rglob("*"), reverse=True):
                    rel = path.relative_to(target)
                    if path.is_file() and rel not in wanted:
                        path.unlink()
                        changed.append(f"{Path(assignment) / rel} (removed)")
                    elif path.is_dir() and not any(path.iterdir()):
                        path.rmdir()
    return changed


def release(course: Course, requested: list[str] | None = None) -> list[str]:
    """The whole `release` command; returns what changed (source/, release/ and docs/design.md's
    exercise table: autograder/authoring/exercise_table.py)."""
    assignments = course.select(requested)
    changed = prepare_sources(course, assignments)
    changed += [str(Path("release") / p)
                for p in generate_release(course, assignments, course.release_dir)]
    changed += exercise_table.update(course)
    if not requested and course.release_dir.is_dir():
        for stale in sorted(course.release_dir.iterdir()):
            if stale.is_dir() and stale.name not in assignments and (
                    stale / f"{stale.name}.ipynb").is_file():
                shutil.rmtree(stale)
                changed.append(f"release/{stale.name}/ (removed: no such assignment in source/)")
    return changed
