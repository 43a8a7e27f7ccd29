"""`python -m autograder new NN_topic`: scaffold an assignment that `check` passes at once.

Writes the three places an exercise lives (docs/design.md, "One exercise, one place"), with one
example exercise, `softplus`, for the author to replace:

    source/NN_topic/NN_topic.ipynb     setup cell, intro table, the exercise, its two tests, summary
    helpers/reference/<topic>.py       the reference (the name after "NN_")
    grading/NN_topic/                  probe.py, kinds.toml, four mutants, one right answer written another way

then generates release/NN_topic/ with nbgrader and rewrites README.md's generated blocks (the
Colab table; `publish` refuses a README whose blocks are stale), or says why it could not. The files come from autograder/authoring/scaffold/ (real
Python and Markdown, linted like the rest). Everything is written into a temporary folder first
and moved into place only when all of it could be made: an existing assignment, reference or
grading folder of that name stops the command before anything is written.
"""

from __future__ import annotations

import argparse
import re
import shutil
import tempfile
from pathlib import Path

import nbformat

from autograder.authoring.setup_cell import apply_setup_cell, setup_head
from autograder.course.grading_folder import folder as grading_folder
from autograder.course.layout import Course, CourseError
from autograder.course.notebooks import write_notebook

SCAFFOLD = Path(__file__).with_name("scaffold")
NAME = re.compile(r"^\d\d_[a-z][a-z0-9_]*$")
PLACEHOLDERS = (("helpers.reference.topic", "helpers.reference.{topic}"),
                ("helpers/reference/topic.py", "helpers/reference/{topic}.py"),
                ("NN_topic", "{assignment}"))
# nbgrader metadata of the scaffold's cells, by file stem; a cell not named here has none.
CELLS = {
    "00_setup": {"grade_id": "setup", "locked": True},
    "01_intro": {"grade_id": "intro", "locked": True},
    "03_softplus": {"grade_id": "softplus", "solution": True},
    "04_test_softplus": {"grade_id": "test_softplus", "grade": True, "locked": True, "points": 1},
    "05_test_softplus_hidden": {"grade_id": "test_softplus_hidden", "grade": True, "locked": True,
                                "points": 2},
    "06_summary": {"grade_id": "summary", "locked": True},
}


def topic_of(assignment: str) -> str:
    """The reference module's name: the assignment's name after its two digits."""
    return assignment.split("_", 1)[1]


def fill(text: str, assignment: str) -> str:
    """The scaffold's text with the new assignment's names."""
    for placeholder, value in PLACEHOLDERS:
        text = text.replace(placeholder, value.format(assignment=assignment, topic=topic_of(assignment)))
    return text


def notebook(assignment: str, root: Path) -> nbformat.NotebookNode:
    """The source notebook: one cell per file of scaffold/notebook/, in order."""
    cells = []
    for path in sorted((SCAFFOLD / "notebook").iterdir()):
        if path.suffix not in (".py", ".md"):
            continue
        text = fill(path.read_text(encoding="utf-8"), assignment).rstrip("\n")
        cell = (nbformat.v4.new_markdown_cell if path.suffix == ".md" else nbformat.v4.new_code_cell)(text)
        cell.id = f"cell-{len(cells) + 1:02d}"
        if path.stem in CELLS:
            cell.metadata["nbgrader"] = {"grade": False, "locked": False, "schema_version": 3,
                                         "solution": False, "task": False, **CELLS[path.stem]}
        cells.append(cell)
    nb = nbformat.v4.new_notebook(cells=cells, metadata={
        "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
        "language_info": {"name": "python"}})
    apply_setup_cell(nb, setup_head(root))
    return nb


def targets(course: Course, assignment: str) -> dict[str, Path]:
    """Where each part goes in the course."""
    return {"source": course.source_dir / assignment,
            "reference": course.root / "helpers" / "reference" / f"{topic_of(assignment)}.py",
            "grading": grading_folder(course.root, assignment)}


def scaffold(course: Course, assignment: str) -> list[Path]:
    """Write the three places of a new assignment; returns what was written. CourseError: nothing was."""
    if not NAME.match(assignment):
        raise CourseError(f"{assignment!r} is not an assignment name: two digits, an underscore, then "
                          "lower-case letters, digits and underscores (e.g. 09_attention)")
    where = targets(course, assignment)
    taken = [str(path.relative_to(course.root)) for path in where.values() if path.exists()]
    if taken:
        raise CourseError(f"{assignment} exists already ({', '.join(taken)}); nothing was written")
    with tempfile.TemporaryDirectory(dir=course.root) as tmp:
        staged = {name: Path(tmp) / name for name in where}
        staged["source"].mkdir()
        write_notebook(notebook(assignment, course.root), staged["source"] / f"{assignment}.ipynb")
        staged["reference"].write_text(fill((SCAFFOLD / "reference.py").read_text(), assignment))
        staged["grading"].mkdir()
        for name in ("probe.py", "kinds.toml"):
            (staged["grading"] / name).write_text(fill((SCAFFOLD / name).read_text(), assignment))
        for kind in ("mutants", "variants"):
            (staged["grading"] / kind).mkdir()
            for path in sorted((SCAFFOLD / kind).glob("*.py")):
                (staged["grading"] / kind / path.name).write_text(fill(path.read_text(), assignment))
        for name, path in where.items():
            path.parent.mkdir(parents=True, exist_ok=True)
            shutil.move(str(staged[name]), str(path))
    return list(where.values())


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("assignment", metavar="NN_topic", help="the new assignment's name, e.g. 09_attention")


def update_readme(course: Course) -> str:
    """Rewrite README.md's generated blocks (the Colab table now lists the new assignment);
    returns what to tell the author: done, or why not and the command that does it."""
    from autograder.authoring.readme import ReadmeError, render_readme
    from autograder.course.atomic import atomic_write
    from autograder.course.settings import SettingsError, course_settings

    readme = course.root / "README.md"
    if not readme.is_file():
        return "no README.md: nothing to update"
    try:
        text = readme.read_text(encoding="utf-8")
        updated = render_readme(text, course, course_settings(course.root))
    except (SettingsError, ReadmeError) as error:
        return (f"README.md's generated blocks were NOT updated ({error}); `publish` refuses "
                "until `python -m autograder configure` has rewritten them")
    if updated == text:
        return "README.md's generated blocks were already up to date"
    atomic_write(readme, updated)
    return "updated README.md's generated blocks (its Colab table lists the new assignment)"


def run(args: argparse.Namespace, course: Course) -> int:
    from autograder.authoring.student_release import release

    written = scaffold(course, args.assignment)
    release(course, [args.assignment])
    for path in written:
        print(f"  wrote {path.relative_to(course.root)}")
    print(f"  wrote release/{args.assignment}/{args.assignment}.ipynb")
    print(f"  {update_readme(course)}")
    print(f"Next: replace the example exercise (docs/authoring.md), then "
          f"`python -m autograder check {args.assignment}`; give it a release and a due date in "
          f"[tool.course.release] and [tool.course.due] of pyproject.toml (without a release date "
          f"`publish` hands it out at once); after editing its intro or summary, `python -m "
          f"autograder configure` rewrites README.md's generated blocks.")
    return 0
