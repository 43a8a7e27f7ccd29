"""`python -m autograder feedback GRADES_DIR [--out DIR]`: one zip per student to hand back.

DIR/<student_id>_feedback.zip holds `index.html` (each assignment: score, submission time, due
date, days late, late penalty, final score; what went wrong for an assignment that could not be
graded) and `<assignment>.html`, the feedback grade wrote (self-contained, cells named:
autograder/feedback.py). The student id leads the file name, so a mail merge or a script
pairs each file with its student from DIR/feedback.csv (student_id, file, total, max_total).
Canvas's "Re-upload submissions" matches files by the names of its own download
(`{lastfirst}_{user_id}_{submission_id}_...`) for one assignment at a time; with `collect
--from canvas` the student id is that user id. Gradescope takes no feedback upload; its
autograder shows results itself. Default DIR: GRADES_DIR/returned. Each zip is built in a
temporary folder inside DIR and renamed into place.
"""

from __future__ import annotations

import argparse
import tempfile
import zipfile
from pathlib import Path

from autograder.export import csv_text, fmt_score
from autograder.feedback import cell_titles, finish_html, scrub_text
from autograder.journal import atomic_write
from autograder.layout import Course, CourseError
from autograder.notebooks import read_notebook
from autograder.results import Result, read_results

# The student's summary page (Jinja, autoescaped): a row per assignment, the total.
INDEX = """<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>Feedback for {{ student }}</title>
<style>
body { font-family: system-ui, sans-serif; margin: 2em; max-width: 60em }
table { border-collapse: collapse }
td, th { border: 1px solid #ccc; padding: .3em .6em; text-align: left }
td.n { text-align: right }
.late { color: #a40 }
</style></head>
<body>
<h1>Feedback for {{ student }}</h1>
<table>
<tr><th>assignment</th><th>autograded score</th><th>submitted</th><th>due</th><th>days late</th>
<th>late penalty</th><th>score</th><th></th></tr>
{% for r in results %}
<tr>
<td>{% if r.status == "graded" %}<a href="{{ r.assignment }}.html">{{ r.assignment }}</a>
{%- else %}{{ r.assignment }}{% endif %}</td>
<td class="n">{{ r.score | score }} / {{ r.max_score | score }}</td>
<td>{{ r.submitted_at | when }}</td><td>{{ r.due | when }}</td>
<td class="n">{% if r.days_late %}<span class="late">{{ r.days_late }}</span>{% else %}0{% endif %}</td>
<td class="n">{{ (-r.penalty) | score if r.penalty else 0 }}</td>
<td class="n"><b>{{ r.final | score }}</b></td>
<td>{% if r.status != "graded" %}{{ r.status }}: {{ r.reason | scrub }}{% endif %}</td>
</tr>
{% endfor %}
<tr><th>total</th><td colspan="5"></td><td class="n"><b>{{ total | score }} / {{ most | score }}</b></td><td></td></tr>
</table>
<p>{{ note }}</p>
</body></html>
"""


def _when(value) -> str:
    return value.strftime("%Y-%m-%d %H:%M UTC") if value else ""


def index_html(student: str, results: list[Result], policy_note: str) -> str:
    """The student's summary page: a row per assignment, the total."""
    from jinja2 import Environment

    env = Environment(autoescape=True)
    env.filters.update(score=fmt_score, when=_when, scrub=scrub_text)
    return env.from_string(INDEX).render(
        student=student, results=results, note=policy_note,
        total=sum(r.final for r in results), most=sum(r.max_score for r in results))


def policy_note(per_day: float, cap: float) -> str:
    if not per_day:
        return "No late penalty applies in this course."
    return (f"A late submission loses {per_day:.0%} of the assignment's points per started day "
            f"after the due date, at most {cap:.0%}.")


def build(grades_dir: Path, course: Course, out: Path | None = None,
          requested: list[str] | None = None) -> list[tuple[str, Path]]:
    """Write one zip per student and feedback.csv; returns (student_id, zip path) pairs."""
    grades_dir = Path(grades_dir)
    results, policy = read_results(grades_dir, course, requested)
    if not results:
        raise CourseError(f"{grades_dir / 'grades.csv'} holds no grade of this course")
    out = Path(out) if out else grades_dir / "returned"
    out.mkdir(parents=True, exist_ok=True)
    note = policy_note(policy.per_day, policy.cap)
    by_student: dict[str, list[Result]] = {}
    for r in results:
        by_student.setdefault(r.student_id, []).append(r)
    made, manifest = [], []
    titles = {a: cell_titles(read_notebook(course.source_notebook(a)))
              for a in {r.assignment for r in results}}
    with tempfile.TemporaryDirectory(prefix=".feedback-", dir=out) as tmp:
        for student, mine in by_student.items():
            name = f"{student}_feedback.zip"
            with zipfile.ZipFile(Path(tmp) / name, "w", zipfile.ZIP_DEFLATED) as archive:
                archive.writestr("index.html", index_html(student, mine, note))
                for r in mine:
                    page = grades_dir / "feedback" / student / r.assignment / f"{r.assignment}.html"
                    if page.is_file():  # finished by grade already; a folder from before too
                        archive.writestr(f"{r.assignment}.html", finish_html(
                            page.read_text(encoding="utf-8"), titles[r.assignment]))
            made.append((student, out / name))
            manifest.append([student, name, fmt_score(sum(r.final for r in mine)),
                             fmt_score(sum(r.max_score for r in mine))])
        for _, path in made:
            (Path(tmp) / path.name).replace(path)
    atomic_write(out / "feedback.csv", csv_text(["student_id", "file", "total", "max_total"], manifest))
    return made


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("grades_dir", type=Path, metavar="GRADES_DIR",
                        help="grade's output folder, holding grades.csv and feedback/")
    parser.add_argument("--out", type=Path, default=None, metavar="DIR",
                        help="where the zips go (default: GRADES_DIR/returned)")
    parser.add_argument("--assignment", "-a", action="append", default=None, metavar="ASSIGNMENT",
                        help="return only this assignment (repeatable; default: every one graded)")


def run(args: argparse.Namespace, course: Course) -> int:
    made = build(args.grades_dir, course, args.out, args.assignment)
    folder = made[0][1].parent
    print(f"feedback: {len(made)} archive(s) in {folder}; list for a mail merge: "
          f"{folder / 'feedback.csv'}")
    return 0
