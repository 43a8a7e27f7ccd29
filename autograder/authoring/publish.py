"""`python -m autograder publish OUT [ASSIGNMENT...]`: write the student repository's tree.

OUT receives what students may see, and nothing else:

  release/<assignment>/     the student notebooks, generated afresh from source/ with nbgrader
  notebooks/                the lecture notebooks, without outputs
  README.md                 README.md's title, introduction, "The course" and "For students"
  LICENSE
  .autograder-publish.json  the files this command wrote, so that the next publish knows them

Before OUT is touched, the whole tree is built in a temporary folder and checked:
- every setup cell and README link agrees with [tool.course] (else: run
  `python -m autograder configure`);
- no answer (a solution's or a hidden test's statement), reference or known-wrong answer is
  readable in any file, by the one rule of autograder/authoring/leaks.py that `check` applies too.
  One problem, and nothing is written.

Which assignments: those named, else those whose release time (`[tool.course.release]`,
autograder/course/term.py) has come (--now, default: now; an assignment without one is released),
together with every assignment an earlier publish put in OUT: publishing a few never removes the
others. A named assignment whose release time has not come stops the command. The calendar gate:
no answer of another assignment whose due date has not passed may be readable in a published
notebook (the same rule, leaks.py's "When"); the release of such a notebook must wait for that due
date (or its content change).

OUT must be missing, empty (a fresh `git clone` holding only .git/ counts as empty) or a
previous publish; nothing is written through a symbolic link inside OUT, and nothing is read
through one in the course (a LICENSE linked to another file would publish that file). Then the files the last publish wrote are replaced or removed, and every
other file (.git/, a workflow you added) is left alone; a file in the way that the last publish
did not write stops the command. A notebook published before that would change in what students
run or are graded on (a code cell but the setup cell, points) stops the command too, saying what
changed, whether the assignment is due and whether `grade` can find the version students have (in
the git history of release/: commit release/ before you publish); --force publishes the change.
Prose and setup-cell changes are published, and listed. Then commit and push OUT, and attach the student wheel
(`python -m autograder wheel`) to the release v<version> of the student repository.
"""

from __future__ import annotations

import argparse
import json
import shutil
import tempfile
from datetime import datetime, timezone
from pathlib import Path

from autograder.authoring.student_tree import (
    MARKER,
    PublishError,
    iso_time,
    previous_files,
    stage_tree,
)
from autograder.course import versions
from autograder.course.layout import Course, CourseError
from autograder.course.notebooks import read_notebook
from autograder.course.settings import SettingsError, course_settings
from autograder.course.term import course_term


def check_no_links(out: Path, files: set[str]) -> None:
    """PublishError when a path to one of `files` in `out` passes through a symbolic link."""
    links = set()
    for rel in files:
        path = out
        for part in Path(rel).parts:
            path = path / part
            if path.is_symlink():
                links.add(path.relative_to(out).as_posix())
                break
    if links:
        raise PublishError(f"{out} holds symbolic links where publish writes: "
                           f"{', '.join(sorted(links)[:5])}; publish never writes through one "
                           "(it could lead outside). Nothing was written.")


def install_tree(stage: Path, files: list[str], out: Path, version: str) -> list[str]:
    """Put the staged `files` into `out` as the module doc says; returns what changed."""
    before = previous_files(out)
    previous = before or set()
    check_no_links(out, previous | set(files) | {MARKER})
    in_the_way = [f for f in files if f not in previous and (out / f).exists()]
    if in_the_way:
        raise PublishError(f"{out} holds files that the last publish did not write: "
                           f"{', '.join(in_the_way[:5])}; move them away. Nothing was written.")
    out.mkdir(parents=True, exist_ok=True)
    record = {"note": "written by `python -m autograder publish`; it replaces these files",
              "version": version}
    # The record first lists both sets: an interrupted publish is still cleaned up next time.
    (out / MARKER).write_text(json.dumps({**record, "files": sorted(previous | set(files))},
                                         indent=1) + "\n", encoding="utf-8")
    changed = []
    for rel in sorted(previous - set(files)):
        path = out / rel
        if path.is_file():
            path.unlink()
            changed.append(f"{rel} (removed)")
            for parent in path.parents:
                if parent == out or any(parent.iterdir()):
                    break
                parent.rmdir()
    for rel in files:
        src, dst = stage / rel, out / rel
        if dst.is_file() and dst.read_bytes() == src.read_bytes():
            continue
        dst.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(src, dst)
        changed.append(rel)
    (out / MARKER).write_text(json.dumps({**record, "files": files}, indent=1) + "\n",
                              encoding="utf-8")
    return changed


def changed_after_publishing(course: Course, stage: Path, files: list[str], out: Path,
                             now: datetime) -> tuple[list[str], dict[str, str]]:
    """The assignments' notebooks that an earlier publish wrote into `out` and that this one would
    change in what students run or are graded on: (one paragraph each, saying what changed,
    whether the assignment is due, and whether grade can find the version students have;
    rel path -> a short note for the changed-files list)."""
    previous = previous_files(out) or set()
    term = course_term(course.root, course.assignments())
    problems, notes = [], {}
    for rel in files:
        parts = Path(rel).parts
        if not (len(parts) == 3 and parts[0] == "release" and rel.endswith(".ipynb")):
            continue
        old_path, assignment = out / rel, parts[1]
        if rel not in previous or not old_path.is_file() or old_path.read_bytes() == (stage / rel).read_bytes():
            continue
        try:
            old = read_notebook(old_path)
        except Exception:
            continue  # not a notebook any more: nothing to compare, publish writes it again
        code, other = versions.changes(old, read_notebook(stage / rel))
        notes[rel] = "changed after publishing: " + ", ".join(code + other)
        if not code:
            continue
        due = term.due.get(assignment)
        when = ("" if due is None else f"; due {due.isoformat()}"
                + (", passed: copies of the published version have been handed in"
                   if term.due_passed(assignment, now) else ""))
        kept = versions.received(versions.cell_checksums(old), versions.history(course.root, assignment))
        found = (f"grade will grade copies of it by that version, committed at {kept.short}" if kept else
                 "grade would grade copies of it by the new version (it finds earlier ones in the "
                 "git history of release/, and this one is in none)")
        problems.append(f"{rel} was already published{when}. Students keep the copy they have; "
                        f"{found}. What changed: " + ", ".join(code + other))
    return problems, notes


def publish(course: Course, out: Path, requested: list[str] | None = None,
            now: datetime | None = None, force: bool = False) -> list[str]:
    """The whole `publish` command; returns the files of `out` that changed. `now`: the time
    the calendar is read at (default: now); `force`: publish changes to notebooks already
    published (module doc)."""
    out = Path(out).resolve()
    if out == course.root or course.root.is_relative_to(out):
        raise PublishError(f"{out} holds the course itself; publish into another folder")
    now = now or datetime.now(timezone.utc)
    previous_files(out)  # refuse early, before the slow part
    try:
        settings = course_settings(course.root)
    except SettingsError as error:
        raise PublishError(str(error)) from None
    (course.build_dir / "work").mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="publish-", dir=course.build_dir / "work") as tmp:
        stage = Path(tmp) / "student"
        stage.mkdir()
        _, files = stage_tree(course, stage, out, requested, now)
        problems, notes = changed_after_publishing(course, stage, files, out, now)
        if problems and not force:
            raise PublishError("a notebook students already have would change; nothing was written:\n"
                               "  - " + "\n  - ".join(problems) + "\nPublish the change with --force.")
        return [f"{line} ({notes[line]})" if line in notes else line
                for line in install_tree(stage, files, out, settings.version)]


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("out", type=Path, metavar="OUT",
                        help="the student repository's folder (a clone of it): missing, empty or "
                             "a previous publish")
    parser.add_argument("assignments", nargs="*", metavar="ASSIGNMENT",
                        help="assignments to publish, besides those published before (default: "
                             "those whose [tool.course.release] time has come)")
    parser.add_argument("--force", action="store_true",
                        help="publish changes to code or points of notebooks already published "
                             "(without it, publish says what changed and writes nothing)")
    parser.add_argument("--now", type=iso_time, default=None, metavar="TIME",
                        help="read the calendar at this ISO 8601 time with its UTC offset "
                             "(default: now), e.g. to see what next week publishes")


def run(args: argparse.Namespace, course: Course) -> int:
    from autograder.engine.template import GenerationError

    try:
        changed = publish(course, args.out, args.assignments, args.now, args.force)
    except (PublishError, GenerationError) as error:
        print(f"publish stopped: {error}")
        return 2
    except CourseError:
        raise
    settings = course_settings(course.root)
    for line in changed:
        print(f"  updated {line}")
    out = Path(args.out)
    print(f"Published {len(changed)} changed file(s) into {out}. Next:\n"
          f"  git -C {out} add -A && git -C {out} commit -m 'Publish' && git -C {out} push\n"
          f"  python -m autograder wheel   # then attach build/dist/{settings.wheel_name} to "
          f"the release {settings.release_tag} of {settings.student_repository}:\n"
          f"  gh release create {settings.release_tag} build/dist/{settings.wheel_name} "
          f"--repo {settings.student_repository}")
    return 0
