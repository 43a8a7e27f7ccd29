"""The template each submission is graded by: the current one, or that of the version of its
assignment the student received, where the notebook's checksums say it was an earlier one whose
graded cells differ (autograder/course/versions.py; issue 39: a notebook changed after it was
published, and a copy of the old version lost the points of tests it never had).

An earlier version's template is built once per batch, from source/<assignment>/ as it was at
that version's commit, beside the current template. Each submission graded so gets a warning on
its row naming the version, and its score is put on the current version's points (grades.csv
holds one maximum per assignment: full marks by an earlier version are full marks); one whose
cells match no version the course's git history holds is graded by the current one, with a
warning saying so.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from autograder.course import versions
from autograder.course.layout import Course
from autograder.course.notebooks import read_notebook
from autograder.course.submitted import Submission
from autograder.engine.job import MAX_NOTEBOOK_BYTES, GradeResult
from autograder.engine.template import GenerationError, Template, build_template


def _checksums(notebook: Path) -> dict[str, str]:
    """The cells' checksums of a handed-in notebook; {} when it cannot be read (the job says why)."""
    try:
        if Path(notebook).stat().st_size > MAX_NOTEBOOK_BYTES:
            return {}
        return versions.cell_checksums(read_notebook(notebook))
    except Exception:
        return {}


def graded_by(course: Course, subs: list[Submission], template: Template,
              folder: Path) -> dict[tuple[str, str], tuple[Path, tuple[str, ...]]]:
    """(student_id, assignment) -> (the template folder to grade by, warnings for the row), for
    every submission of `subs` that has a notebook. `folder`: where earlier versions' templates go."""
    known: dict[str, list[versions.Version]] = {}
    built: dict[tuple[str, str], Path | str] = {}  # (assignment, commit) -> template, or why not
    plan = {}
    for sub in subs:
        if sub.notebook is None:
            continue
        key, name = (sub.student_id, sub.assignment), sub.assignment
        plan[key] = (template.dir, ())
        sums = _checksums(sub.notebook)
        if not sums:
            continue  # no checksums (stripped, unreadable): nothing tells; the current one
        if name not in known:
            current = versions.version_of(read_notebook(template.release_notebook(name)))
            known[name] = [current, *versions.history(course.root, name)]
        current = known[name][0]
        chosen = versions.received(sums, known[name])
        if chosen is None:
            plan[key] = (template.dir, (
                f"its cells match no version of {name} that this course's git history of "
                f"release/ holds (it may come from an earlier publish): graded by the current one",))
            continue
        if chosen.graded_checksums() == current.graded_checksums():
            continue  # the same tests: the current template
        if (name, chosen.commit) not in built:
            built[name, chosen.commit] = _template_at(course, name, chosen, folder)
        made = built[name, chosen.commit]
        changed = versions.differing(chosen.graded_checksums(), current.graded_checksums())
        if isinstance(made, str):
            plan[key] = (template.dir, (f"it came from {name} as released at {chosen.short}, but "
                                        f"that version could not be built ({made}): graded by "
                                        "the current one",))
            continue
        plan[key] = (made, (f"graded by {name} as released at {chosen.short} ({chosen.date[:10]}), "
                            "the version this notebook came from; the current one differs in "
                            + ", ".join(changed[:6]) + (" ..." if len(changed) > 6 else ""),))
    return plan


def _template_at(course: Course, assignment: str, version: versions.Version, folder: Path) -> Path | str:
    """The template of `assignment` as it was at `version`'s commit; a line saying why not."""
    where = Path(folder) / version.commit / assignment  # one commit may have released several
    try:
        sources = versions.export_source(course.root, version.commit, assignment, where / "source")
        return build_template(sources, [assignment], where / "template").dir
    except (OSError, GenerationError) as error:
        return str(error).splitlines()[0][:200]


def on_the_course_scale(result: GradeResult, max_score: float) -> GradeResult:
    """`result` with its score on the current version's scale, where an earlier version with
    other points graded it (grades.csv holds one maximum per assignment, which export and the
    late penalties read): 6 of 6 by that version is 7 of 7. The row's warnings keep the raw score."""
    if not result.max_score or result.max_score == max_score:
        return result
    score = round(result.score * max_score / result.max_score, 2)
    return replace(result, score=score, max_score=max_score, warnings=[
        *result.warnings, f"scored {result.score:g} of {result.max_score:g} by that version: "
                          f"{score:g} of {max_score:g} on the current one's points"])
