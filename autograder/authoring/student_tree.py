"""What the student repository holds at a moment: the assignments the calendar has released (and
those published before), staged with the lecture notebooks, the student README and the LICENSE.

One model for everything students see: `publish` (autograder/authoring/publish.py) installs the
staged tree into the student repository, and `site` (autograder/authoring/site/) builds the course
website from the same staged tree, so that the site never shows an assignment before its release
time nor anything of the instructor's side. The rules (which assignments, the calendar gate, the
leak search, no symbolic link followed in the course) are publish's module doc.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
from datetime import datetime
from pathlib import Path

from autograder.authoring.agreement import disagreements
from autograder.authoring.leaks import (
    Reading,
    answers,
    course_given,
    find_leaks,
    secrets,
    split_regions,
)
from autograder.authoring.readme import (
    ReadmeError,
    render_readme,
    student_notebooks,
    student_readme,
)
from autograder.course.layout import Course
from autograder.course.notebooks import read_notebook, strip_outputs, write_notebook
from autograder.course.settings import course_settings
from autograder.course.term import Term, course_term

MARKER = ".autograder-publish.json"
ALLOWED_IN_NEW_OUT = {".git"}  # what a fresh clone of an empty repository holds
REQUIRED = ("README.md", "LICENSE", "pyproject.toml")


class PublishError(Exception):
    """The student tree cannot be published; the message says why. Nothing was written."""


def links_in_course(course: Course, assignments: list[str]) -> list[str]:
    """What publish reads of the course (README.md, LICENSE, notebooks/, the assignments' source
    folders) that is a symbolic link or lies under one: 'path -> target', relative to the course."""
    root = course.root
    found = []
    for top in [root / "README.md", root / "LICENSE", root / "notebooks",
                *(course.source_dir / a for a in assignments)]:
        path = root
        for part in top.relative_to(root).parts:  # the path and every folder above it
            path = path / part
            if path.is_symlink():
                found.append(path)
                break
        else:
            for folder, names, files in os.walk(top):  # never into a linked folder
                found += [Path(folder) / name for name in names + files
                          if (Path(folder) / name).is_symlink()]
    return sorted({f"{p.relative_to(root).as_posix()} -> {os.readlink(p)}" for p in found})


def build_tree(course: Course, assignments: list[str], stage: Path) -> list[str]:
    """Write the student tree into the empty folder `stage`; returns its files, relative."""
    from autograder.authoring.student_release import generate_release

    links = links_in_course(course, assignments)
    if links:  # a link publishes whatever it points to: a reference, a key, another course
        raise PublishError("publish never follows a symbolic link in the course, and these are: "
                           + ", ".join(links[:5]) + (" ..." if len(links) > 5 else "")
                           + ". Put the file itself in its place; nothing was written.")
    missing = [name for name in REQUIRED if not (course.root / name).is_file()]
    if missing:
        raise PublishError(f"{course.root} lacks {', '.join(missing)}; publish copies them")
    problems = disagreements(course, release=False)
    if problems:
        raise PublishError("these files disagree with [tool.course] in pyproject.toml; run "
                           "`python -m autograder configure`:\n  - " + "\n  - ".join(problems))
    settings = course_settings(course.root)
    generate_release(course, assignments, stage / "release")
    for path in sorted((course.root / "notebooks").glob("*.ipynb")):
        write_notebook(strip_outputs(read_notebook(path)), stage / "notebooks" / path.name)
    chosen = [n for n in student_notebooks(course)
              if not n.startswith("release/") or Path(n).parts[1] in assignments]
    try:
        text = render_readme((course.root / "README.md").read_text(encoding="utf-8"), course,
                             settings, notebooks=chosen)
        text = student_readme(text)
    except ReadmeError as error:
        raise PublishError(str(error)) from None
    (stage / "README.md").write_text(text, encoding="utf-8")
    shutil.copyfile(course.root / "LICENSE", stage / "LICENSE")
    leaks = find_leaks(stage, secrets(course))
    if leaks:
        shown = "\n  - ".join(str(leak) for leak in leaks[:10])
        more = f"\n  ... and {len(leaks) - 10} more" if len(leaks) > 10 else ""
        raise PublishError(f"the student tree would hold {len(leaks)} answer line(s) or "
                           f"window(s); nothing was written:\n  - {shown}{more}")
    return sorted(p.relative_to(stage).as_posix() for p in stage.rglob("*") if p.is_file())


def previous_files(out: Path) -> set[str] | None:
    """The files the last publish wrote into `out`; None when `out` holds no publish.

    Raises PublishError when `out` holds anything else, so that nothing of it is ever removed.
    """
    if not out.exists():
        return None
    if not out.is_dir():
        raise PublishError(f"{out} is not a folder")
    marker = out / MARKER
    if not marker.is_file():
        others = sorted(p.name for p in out.iterdir() if p.name not in ALLOWED_IN_NEW_OUT)
        if others:
            raise PublishError(
                f"{out} is not empty and holds no earlier publish ({MARKER} is missing): "
                f"{', '.join(others[:5])}{' ...' if len(others) > 5 else ''}. Publish into an "
                "empty folder or a fresh clone of the student repository; nothing was written.")
        return None
    try:
        files = json.loads(marker.read_text(encoding="utf-8"))["files"]
        if not isinstance(files, list):  # a string would be read as its characters' names
            raise ValueError("files is not a list")
        if not all(isinstance(f, str) and f and not Path(f).is_absolute()
                   and ".." not in Path(f).parts for f in files):
            raise ValueError("a path outside the folder")
    except (ValueError, KeyError, TypeError) as error:
        raise PublishError(f"{marker}: not a publish record ({error}); nothing was written") from None
    return set(files)


def _released_after(term: Term, assignment: str, other: str) -> bool:
    """Whether `assignment` is handed out after `other` (no release time: from the start)."""
    mine, theirs = term.release.get(assignment), term.release.get(other)
    return mine is not None and (theirs is None or mine > theirs)


def shown_answers(course: Course, published: list[str], term: Term, now: datetime) -> list[str]:
    """The calendar gate (autograder/authoring/leaks.py, "When"): for each notebook of `published`,
    every answer of another assignment not yet due at `now` readable in it; one line each.

    The owner's answers are searched against what its students were given: its own code, the
    lecture notebooks' and the code of every notebook released no later than it; the shown
    notebook is read as its release shows it (everything outside the regions, prose included)."""
    notebooks = {a: read_notebook(course.source_notebook(a)) for a in course.assignments()}
    shown = {a: Reading("\n".join(split_regions(cell.source)[1] for cell in notebooks[a].cells))
             for a in published}
    owned: dict[str, list] = {}
    problems = []
    for shown_in in published:
        for owner, nb in notebooks.items():
            if owner == shown_in or term.due_passed(owner, now) or not _released_after(term, shown_in, owner):
                continue
            if owner not in owned:
                given = course_given(course, [other for a, other in notebooks.items()
                                              if not _released_after(term, a, owner)])
                owned[owner] = answers(nb, course.source_notebook(owner).relative_to(course.root).as_posix(),
                                       given)
            for answer in owned[owner]:
                found = ([line for line in answer.lines if shown[shown_in].shows(line)]
                         + [piece for piece in answer.pieces if shown[shown_in].shows_piece(piece)])
                copied = sorted(w for w in answer.windows if shown[shown_in].shows_window(w))
                if not (found or copied):
                    continue
                due = term.due.get(owner)
                example = (found or copied[0].splitlines())[0][:60]
                problems.append(
                    f"{shown_in} shows {owner}'s answer {answer.cell} ({len(found)} of its "
                    f"{len(answer.lines)} lines{', and a run of lines' if copied else ''}: {example!r}...) "
                    f"before {owner} is due: "
                    + (f"release {shown_in} after {due.isoformat()}" if due else
                       f"{owner} has no due date in [tool.course.due]"))
    return problems


def published_assignments(out: Path | None, course: Course) -> list[str]:
    """The assignments of `course` whose notebook an earlier publish wrote into `out` (None: none)."""
    files = (previous_files(out) if out is not None else None) or set()
    return [a for a in course.assignments() if f"release/{a}/{a}.ipynb" in files]


def choose(course: Course, out: Path | None, requested: list[str] | None, term: Term,
           now: datetime) -> list[str]:
    """What publish writes (module doc): the named or released assignments, and those published."""
    if requested:
        chosen = course.select(requested)
        early = [a for a in chosen if not term.released(a, now)]
        if early:
            raise PublishError("not released yet: " + ", ".join(
                f"{a} (on {term.release[a].isoformat()})" for a in early)
                + " ([tool.course.release]); nothing was written")
    else:
        chosen = [a for a in course.assignments() if term.released(a, now)]
    before = published_assignments(out, course)
    return [a for a in course.assignments() if a in chosen or a in before]


def stage_tree(course: Course, stage: Path, out: Path | None = None,
               requested: list[str] | None = None, now: datetime | None = None) -> tuple[list[str], list[str]]:
    """Write into the empty folder `stage` what the student repository holds at `now`: the
    assignments `choose` picks (the named or released ones, and those an earlier publish put in
    `out`), after the calendar gate; returns (those assignments, the tree's files, relative)."""
    term = course_term(course.root, course.assignments())
    assignments = choose(course, out, requested, term, now)
    if not assignments:
        raise PublishError(f"no assignment is released at {now.isoformat()} "
                           "([tool.course.release]); nothing was written")
    shown = shown_answers(course, assignments, term, now)
    if shown:
        raise PublishError("a notebook would show the answer of an assignment not yet due; "
                           "nothing was written:\n  - " + "\n  - ".join(shown))
    return assignments, build_tree(course, assignments, stage)


def iso_time(text: str) -> datetime:
    """An ISO 8601 time with its UTC offset, as the --now options take it."""
    try:
        when = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an ISO 8601 time") from None
    if when.tzinfo is None:
        raise argparse.ArgumentTypeError(f"{text!r} has no UTC offset (add +00:00 for UTC)")
    return when
