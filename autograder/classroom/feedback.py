"""`python -m autograder feedback GRADES_DIR [--submitted SUBMITTED] [--out DIR]`: feedback to hand back.

DIR/<student_id>_feedback.zip holds `index.html` (each assignment: score, submission time, due
date (the student's own, with an extension), days late, late penalty, final score; what went wrong
for an assignment that could not be graded) and `<assignment>.html`, the feedback page (self-contained, cells named:
autograder/engine/feedback_html.py). Pages are made here, when asked for, from what grade kept
(GRADES_DIR/autograded/ and the scores in grades.json), one process per core, each page in a child
with limits on time, memory and size (autograder/engine/page_server.py), into
GRADES_DIR/feedback/<student>/<assignment>/; a page already there (`grade --feedback`, an earlier
run) is used as it is, and a page that cannot be made is reported and the rest go on. The student id leads the file name, so a mail merge pairs each file
with its student through DIR/feedback.csv (student_id, name, email, file, total, max_total).
Names and emails come from the LMS's roster (--roster FILE --lms canvas|gradescope, matched as
`export` matches: Canvas's gradebook export gives "Doe, Jane", read "Jane Doe", and an email only
where its SIS Login ID is one; Gradescope's roster gives both), else from SUBMITTED/lms.csv
(Gradescope's download names both; Canvas's only a file-name form, `doejane`). Pages are titled
by the student's name and id; every cell of feedback.csv is neutralized against formula injection.
Every time is shown in the course's zone with its name ("2026-11-09 23:59 CST"; `[tool.course]
timezone`, autograder/course/term.py). The final scores and totals follow export's one rule
(results.reported): a row grade could not grade is empty, not 0, unless --ungraded zero, so
feedback.csv's total is what the LMS import adds up.

Canvas. Its gradebook's "Re-upload Submissions" takes a zip of files named as its own download
and adds each file as a comment on the submission it names: canvas-lms
`Assignment#infer_comment_context_from_filename` (app/models/assignment.rb) reads the first two
all-digit `_`-separated parts of the name as the Canvas user id and the id of a file of that
user's current submission, and ignores a file whose ids do not match. With --submitted, for every
student collected `--from canvas`, DIR/canvas/<assignment>.zip holds
`{lastfirst}_{user_id}_{file_id}_{assignment}_feedback.html`: the feedback page with the
assignment's score, lateness and penalty on top (one self-contained page, since Canvas attaches
files one by one). Canvas shows the attachment under the name of the file the student handed in
(`01_numpy_mlp.ipynb`; instructure/canvas-lms issue #2406); opened, it is the HTML page.
Gradescope takes no feedback upload: its autograder's results.json shows the feedback itself.

Default DIR: GRADES_DIR/returned. Each zip is built in a temporary folder inside DIR and renamed
into place; feedback.csv is written whole.
"""

from __future__ import annotations

import argparse
import json
import queue
import re
import sys
import tempfile
import zipfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from autograder.classroom.lms_manifest import MANIFEST, LmsRecord, read_manifest
from autograder.classroom.results import UNGRADED, Result, read_results, reported, total
from autograder.classroom.roster import csv_text, fmt_score, roster_people
from autograder.course.atomic import atomic_write
from autograder.course.layout import Course, CourseError
from autograder.course.safe_text import safe_line
from autograder.course.term import Term, course_term
from autograder.engine.feedback_html import scrub_text
from autograder.engine.job import default_jobs
from autograder.engine.page_server import PageServer
from autograder.engine.template import build_template

# The scores table (Jinja, autoescaped): a row per assignment, the total; the top of the
# student's summary page and of each page uploaded to Canvas.
SUMMARY = """<section class="scores">
<style>
section.scores { font-family: system-ui, sans-serif; margin: 1em 0 2em }
section.scores table { border-collapse: collapse }
section.scores td, section.scores th { border: 1px solid #ccc; padding: .3em .6em; text-align: left }
section.scores td.n { text-align: right }
section.scores .late { color: #a40 }
</style>
<h1>Feedback for {{ student }}</h1>
<table>
<tr><th>assignment</th><th>autograded score</th><th>submitted</th><th>due</th><th>days late</th>
<th>late penalty</th><th>score</th><th></th></tr>
{% for r in results %}
<tr>
<td>{% if r.status == "graded" and links %}<a href="{{ r.assignment }}.html">{{ r.assignment }}</a>
{%- else %}{{ r.assignment }}{% endif %}</td>
<td class="n">{{ r.score | score }} / {{ r.max_score | score }}</td>
<td>{{ r.submitted_at | when }}</td><td>{{ r.due | when }}</td>
<td class="n">{% if r.days_late %}<span class="late">{{ r.days_late }}</span>{% else %}0{% endif %}</td>
<td class="n">{{ (-r.penalty) | score if r.penalty else 0 }}</td>
<td class="n"><b>{{ r | reported }}</b></td>
<td>{% if r.status != "graded" %}{{ r.status }}: {{ r.reason | scrub }}{% endif %}</td>
</tr>
{% endfor %}
{% if results | length > 1 %}
<tr><th>total</th><td colspan="5"></td><td class="n"><b>{{ total }} / {{ most | score }}</b></td><td></td></tr>
{% endif %}
</table>
<p>{{ note }} Times are in {{ zone }}{% if extended %}; your due date is your own (an extension){% endif %}.</p>
</section>
"""
INDEX = """<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>Feedback for {{ student }}</title></head>
<body style="margin: 2em; max-width: 60em">
{% include "summary" %}
</body></html>
"""


@dataclass(frozen=True)
class Shown:
    """How the pages show what they show: times in the course's zone (autograder/course/term.py),
    an ungraded row as export writes it (results.reported, --ungraded)."""

    term: Term = Term()
    ungraded: str = "blank"

    def zone_name(self) -> str:
        """"America/Chicago", "UTC-05:00", "UTC": the zone's full name, for the note."""
        return str(getattr(self.term.zone, "key", None) or datetime.now(self.term.zone).tzname())


def _render(template: str, student: str, results: list[Result], policy_note: str, links: bool,
            shown: Shown) -> str:
    from jinja2 import DictLoader, Environment

    def lms(r: Result) -> str:
        score = reported(r, shown.ungraded)
        return "" if score is None else fmt_score(score)

    env = Environment(loader=DictLoader({"summary": SUMMARY, "index": INDEX}), autoescape=True)
    env.filters.update(score=fmt_score, when=shown.term.show, scrub=scrub_text, reported=lms)
    summed = total(results, shown.ungraded)
    return env.get_template(template).render(
        student=student, results=results, note=policy_note, links=links,
        total="" if summed is None else fmt_score(summed), most=sum(r.max_score for r in results),
        zone=shown.zone_name(), extended=any(r.extended for r in results))


def index_html(student: str, results: list[Result], policy_note: str, shown: Shown = Shown()) -> str:
    """The student's summary page: a row per assignment, the total."""
    return _render("index", student, results, policy_note, True, shown)


def canvas_page(student: str, result: Result, feedback_html: str | None, policy_note: str,
                shown: Shown = Shown()) -> str:
    """One self-contained page for Canvas: the assignment's scores table, then its feedback
    (finished HTML from grade) when there is one."""
    page = _render("index", student, [result], policy_note, False, shown)
    if feedback_html is None:
        return page
    from bs4 import BeautifulSoup

    soup = BeautifulSoup(feedback_html, "html.parser")
    summary = BeautifulSoup(_render("summary", student, [result], policy_note, False, shown),
                            "html.parser")
    (soup.body or soup).insert(0, summary)
    return str(soup)


def canvas_name(record: LmsRecord, assignment: str) -> str:
    """The name Canvas's Re-upload Submissions pairs with the student's submission:
    {lastfirst}_{user_id}_{file_id}_{assignment}_feedback.html."""
    name = re.sub(r"[^\w]", "", record.name) or "student"
    name = re.sub(r"(^|_)\d+(?=_|$)", "", name).strip("_") or "student"  # no all-digit part before the ids
    return f"{name}_{record.user_id}_{record.file_id}_{assignment}_feedback.html"


def policy_note(per_day: float, cap: float) -> str:
    if not per_day:
        return "No late penalty applies in this course."
    return (f"A late submission loses {per_day:.0%} of the assignment's points per started day "
            f"after the due date, at most {cap:.0%}.")


def page_path(grades_dir: Path, student_id: str, assignment: str) -> Path:
    return Path(grades_dir) / "feedback" / student_id / assignment / f"{assignment}.html"


def make_pages(grades_dir: Path, course: Course, results: list[Result], jobs: int | None = None,
               warn=None) -> list[str]:
    """Make the feedback page of every graded result that has none yet, from grade's executed
    notebook and the scores grades.json holds, `jobs` at a time (default: one per core), each in a
    child process with limits (autograder/engine/page_server.py). Returns what could not be made
    in full, one line each ('student/assignment: why': no page, or a short page past the limits),
    also given to `warn`, made safe for a terminal."""
    grades_dir = Path(grades_dir)
    try:
        records = json.loads((grades_dir / "grades.json").read_text(encoding="utf-8"))
        by_key = {(r["student_id"], r["assignment"]): r for r in records if isinstance(r, dict)}
    except (OSError, ValueError, KeyError, TypeError):
        by_key = {}
    todo, problems = [], []
    for r in results:
        if r.status != "graded" or page_path(grades_dir, r.student_id, r.assignment).is_file():
            continue
        notebook = grades_dir / "autograded" / r.student_id / r.assignment / f"{r.assignment}.ipynb"
        record = by_key.get((r.student_id, r.assignment))
        if record is None or not isinstance(record.get("cells"), dict) or not notebook.is_file():
            problems.append(f"{r.student_id}/{r.assignment}: no feedback page: grade kept no executed "
                            f"notebook or no scores for it (grade it again)")
            continue
        scores = {gid: float(cell.get("score", 0.0)) for gid, cell in record["cells"].items()}
        todo.append((r, notebook, scores))
    if todo:
        with tempfile.TemporaryDirectory(prefix=".feedback-template-", dir=grades_dir) as tmp:
            template = build_template(course.source_dir, sorted({r.assignment for r, _, _ in todo}),
                                      Path(tmp) / "template")
            calls = [(template.dir, r.assignment, r.student_id, notebook, scores,
                      page_path(grades_dir, r.student_id, r.assignment),
                      course.source_notebook(r.assignment)) for r, notebook, scores in todo]
            for (r, _, _), problem in zip(todo, _make_all(calls, jobs or default_jobs())):
                if problem is not None:  # one page lost or cut short, never the others
                    problems.append(f"{r.student_id}/{r.assignment}: {problem}")
    for line in problems:
        (warn or (lambda text: print(safe_line(text), file=sys.stderr)))(line)
    return problems


def _make_all(calls: list[tuple], jobs: int) -> list[str | None]:
    """PageServer.make(*call) for each call on `jobs` page servers at once (each has imported what
    a page needs, and forks a child with limits per page); per call, None or what went wrong."""
    servers = [PageServer() for _ in range(min(jobs, len(calls)))]
    free: queue.SimpleQueue = queue.SimpleQueue()
    for server in servers:
        free.put(server)

    def one(call: tuple) -> str | None:
        server = free.get()
        try:
            run = server.make(*call)
        except Exception as error:
            return "no feedback page: " + (str(error).splitlines()[0][:300] if str(error) else type(error).__name__)
        finally:
            free.put(server)
        return None if run.made else f"a short page instead of the feedback: {run.short}"

    try:
        with ThreadPoolExecutor(len(servers)) as pool:
            return list(pool.map(one, calls))
    finally:
        for server in servers:
            server.close()


def build(grades_dir: Path, course: Course, out: Path | None = None,
          requested: list[str] | None = None, submitted: Path | None = None,
          people: dict[str, tuple[str, str]] | None = None,
          ungraded: str = "blank") -> list[tuple[str, Path]]:
    """Write one zip per student, feedback.csv and, with `submitted` (its lms.csv), one Canvas
    re-upload zip per assignment; returns (student_id, zip path) pairs of the students' zips.
    people: student id -> (name, email) from the LMS's roster (roster.roster_people), first
    for feedback.csv and the pages' titles; lms.csv's names and emails fill the gaps.
    ungraded: what a row grade could not grade counts for, as export's --ungraded."""
    grades_dir = Path(grades_dir)
    people = people or {}
    if ungraded not in UNGRADED:
        raise CourseError(f"--ungraded {ungraded}: choose blank or zero")
    results, policy = read_results(grades_dir, course, requested)
    if not results:
        raise CourseError(f"{grades_dir / 'grades.csv'} holds no grade of this course")
    lms = {}
    if submitted is not None:
        if not (Path(submitted) / MANIFEST).is_file():
            raise CourseError(f"--submitted {submitted}: no {MANIFEST} there (collect writes it)")
        lms = read_manifest(submitted)
    out = Path(out) if out else grades_dir / "returned"
    out.mkdir(parents=True, exist_ok=True)
    note = policy_note(policy.per_day, policy.cap)
    shown = Shown(course_term(course.root, course.assignments()), ungraded)
    by_student: dict[str, list[Result]] = {}
    for r in results:
        by_student.setdefault(r.student_id, []).append(r)
    made, manifest, canvas = [], [], {}
    make_pages(grades_dir, course, results)
    with tempfile.TemporaryDirectory(prefix=".feedback-", dir=out) as tmp:
        for student, mine in by_student.items():
            known = [rec for (s, _), rec in sorted(lms.items()) if s == student]
            person, email = people.get(student, ("", ""))
            person = person or next((k.name for k in known if k.name and k.lms != "canvas"), "")
            email = email or next((k.email for k in known if k.email), "")
            title = f"{person} ({student})" if person else student
            name = f"{student}_feedback.zip"
            pages = {}
            for r in mine:
                page = page_path(grades_dir, student, r.assignment)
                if page.is_file():  # finished already, in a child with limits (make_pages, grade --feedback)
                    pages[r.assignment] = page.read_text(encoding="utf-8")
            with zipfile.ZipFile(Path(tmp) / name, "w", zipfile.ZIP_DEFLATED) as archive:
                archive.writestr("index.html", index_html(title, mine, note, shown))
                for assignment, html in pages.items():
                    archive.writestr(f"{assignment}.html", html)
            for r in mine:
                record = lms.get((student, r.assignment))
                if record and record.lms == "canvas" and record.user_id and record.file_id:
                    canvas.setdefault(r.assignment, {})[canvas_name(record, r.assignment)] = canvas_page(
                        title, r, pages.get(r.assignment), note, shown)
            made.append((student, out / name))
            summed = total(mine, ungraded)  # what export gives the LMS: empty when nothing was graded
            manifest.append([student, person or next((k.name for k in known if k.name), ""),
                             email, name, "" if summed is None else fmt_score(summed),
                             fmt_score(sum(r.max_score for r in mine))])
        (Path(tmp) / "canvas").mkdir()
        for assignment, files in canvas.items():
            with zipfile.ZipFile(Path(tmp) / "canvas" / f"{assignment}.zip", "w", zipfile.ZIP_DEFLATED) as archive:
                for filename, html in sorted(files.items()):
                    archive.writestr(filename, html)
        for _, path in made:
            (Path(tmp) / path.name).replace(path)
        if canvas:
            (out / "canvas").mkdir(exist_ok=True)
            for assignment in canvas:
                (Path(tmp) / "canvas" / f"{assignment}.zip").replace(out / "canvas" / f"{assignment}.zip")
    atomic_write(out / "feedback.csv", csv_text(
        ["student_id", "name", "email", "file", "total", "max_total"], manifest))
    return made


def canvas_zips(out: Path) -> list[Path]:
    """The Canvas re-upload zips `build` wrote in `out`."""
    return sorted((Path(out) / "canvas").glob("*.zip"))


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("grades_dir", type=Path, metavar="GRADES_DIR",
                        help="grade's output folder, holding grades.csv, grades.json and autograded/")
    parser.add_argument("--out", type=Path, default=None, metavar="DIR",
                        help="where the zips go (default: GRADES_DIR/returned)")
    parser.add_argument("--submitted", type=Path, default=None, metavar="SUBMITTED",
                        help="the folder collect filled (its lms.csv): adds names and emails to "
                             "feedback.csv and writes DIR/canvas/<assignment>.zip for Canvas's "
                             "Re-upload Submissions")
    parser.add_argument("--roster", type=Path, default=None, metavar="FILE",
                        help="the LMS's roster, as export reads it (--lms says which): names and "
                             "emails for feedback.csv and the pages' titles")
    parser.add_argument("--lms", choices=("canvas", "gradescope"), default=None,
                        help="what --roster is: Canvas's gradebook export or Gradescope's roster")
    parser.add_argument("--roster-key", default=None, metavar="KEY",
                        help="as export's --roster-key (canvas: id or sis; gradescope: sid or email)")
    parser.add_argument("--assignment", "-a", action="append", default=None, metavar="ASSIGNMENT",
                        help="return only this assignment (repeatable; default: every one graded)")
    parser.add_argument("--ungraded", choices=UNGRADED, default="blank",
                        help="what a submission grade could not grade counts for in the totals, as "
                             "export's --ungraded: blank (the LMS keeps what it has; default) or zero")


def run(args: argparse.Namespace, course: Course) -> int:
    if (args.roster is None) != (args.lms is None):
        raise CourseError("--roster and --lms go together: --roster FILE --lms canvas|gradescope")
    people = roster_people(args.lms, args.roster, args.roster_key) if args.roster else None
    made = build(args.grades_dir, course, args.out, args.assignment, args.submitted, people,
                 args.ungraded)
    folder = made[0][1].parent
    print(f"feedback: {len(made)} archive(s) in {folder}; list for a mail merge: "
          f"{folder / 'feedback.csv'}")
    for path in canvas_zips(folder):
        with zipfile.ZipFile(path) as archive:
            count = len(archive.namelist())
        print(f"  for Canvas ({count} student(s)): {path}; upload it in the gradebook, the "
              f"assignment's menu > Re-upload Submissions")
    return 0
