"""Feedback a student can keep: nbgrader's feedback HTML made safe, self-contained and readable.

`finish(html_path, source_notebook)` rewrites one feedback file in place (grade.py calls it on
every file it writes; running it twice changes nothing). Whatever the student's cells hold:
  - the page is rebuilt from an allow-list (nh3, the Rust `ammonia` sanitizer): the template's
    own stylesheet, then the body with only the tags and attributes listed below, no event
    handler, no `javascript:` or remote URL, no script, form, frame, object, meta or link; an
    image only as an embedded picture (data:image/...). Nothing in it runs, loads or redirects;
    it opens offline, in a mail client, in an LMS's preview;
  - maths in the text ($...$, $$...$$) becomes MathML (latex2mathml), which browsers draw
    without MathJax's script: the first FORMULA_LIMIT formulas of a page, each at most
    FORMULA_CHARS long; the others stay as their TeX text (MathML is about 24 times the TeX: 300k
    `$x$` made a 29 MB page and took 88 CPU-s and 1.5 GiB);
  - the notebook is cut before nbconvert renders it (`cap_notebook`): each text (a cell's source,
    an output) at TEXT_LIMIT characters, all of them together at NOTEBOOK_TEXT_LIMIT (a graded
    cell keeps GRADED_TEXT of each text whatever came before it), at most CELL_LIMIT cells besides
    the graded ones, pictures and attachments up to PAGE_LIMIT bytes in all (a 20 MB notebook of
    markdown made a 37 MB page: 108 CPU-s, 2.3 GiB); after rendering, pictures are dropped past
    PAGE_LIMIT and a page past PAGE_BYTES_LIMIT is not written (autograder/engine/page_server.py
    writes a short page instead; autograder/engine/execute.py caps the outputs before all this);
  - every graded cell is named by what it checks, the first line of its docstring
    ("scale multiplies every element by the factor."), instead of "Test cell" and its grade_id;
    an answer cell by the function or class it defines;
  - no internal key (grade_id, `cell-…` ids, `__autograder…` names) and no path of the grading
    machine (/tmp/…, /work/…, the kernel's job folder): a path keeps only its file name.

`render` makes one page; autograder/engine/page_server.py runs it in a child process with limits
on time, memory and page size (`grade --feedback` and `python -m autograder feedback` both), so the
grader's own process does none of this work on a student's data. `python -m autograder feedback`
(autograder/classroom/feedback.py) packs the files per student.
"""

from __future__ import annotations

import html as html_text
import re
from pathlib import Path

from autograder.course import exercises
from autograder.course.atomic import atomic_write
from autograder.course.notebooks import grade_id, read_notebook, write_notebook
from autograder.course.safe_text import safe_line

TEXT_LIMIT = 100_000  # characters of one text (a cell's source, an output) kept
PAGE_LIMIT = 8 << 20  # bytes of a page past which embedded pictures are left out
# The notebook's text rendered in all: three times the largest source notebook's (08, 105k
# characters). Rendering is what costs: 300k characters of code, every token a <span>, took about
# 13 CPU-s and 0.4 GiB; of markdown, about 3. A cell of the source (a grade_id: an answer, a test)
# keeps GRADED_TEXT characters of its texts even past the limit (an answer, a check's message);
# CELL_LIMIT cells besides those are shown (the course's largest notebook has 105 cells).
NOTEBOOK_TEXT_LIMIT = 300_000
GRADED_TEXT = 5_000
CELL_LIMIT = 1_000
FORMULA_LIMIT = 2_000  # formulas of a page drawn as MathML; the rest stay as their TeX text
FORMULA_CHARS = 2_000  # a longer formula stays as its TeX text
PAGE_BYTES_LIMIT = 16 << 20  # a finished page past this is not written (a short page instead)
# The allow-list: what the template and a notebook's cells need, nothing that runs or loads.
TAGS = {
    "a", "abbr", "b", "blockquote", "br", "caption", "code", "col", "colgroup", "dd", "del",
    "details", "div", "dl", "dt", "em", "figcaption", "figure", "h1", "h2", "h3", "h4", "h5",
    "h6", "hr", "i", "img", "ins", "kbd", "li", "main", "mark", "ol", "p", "pre", "q", "s",
    "samp", "small", "span", "strong", "sub", "summary", "sup", "table", "tbody", "td", "tfoot",
    "th", "thead", "tr", "u", "ul", "var",
    # MathML, as latex2mathml writes it
    "math", "mi", "mn", "mo", "ms", "mtext", "mspace", "mrow", "mfrac", "msqrt", "mroot",
    "mstyle", "merror", "mpadded", "mphantom", "mfenced", "menclose", "msub", "msup", "msubsup",
    "munder", "mover", "munderover", "mmultiscripts", "mprescripts", "none", "mtable", "mtr",
    "mtd", "semantics", "annotation",
}
ATTRIBUTES = {
    "*": {"class", "id", "title", "lang", "dir"},
    "a": {"href", "name"},
    "img": {"src", "alt", "width", "height"},
    "td": {"colspan", "rowspan", "align"}, "th": {"colspan", "rowspan", "align", "scope"},
    "ol": {"start"}, "details": {"open"},
    "math": {"display", "xmlns"}, "mstyle": {"displaystyle", "scriptlevel"},
    "mo": {"stretchy", "fence", "separator", "lspace", "rspace", "form", "largeop", "movablelimits"},
    "mi": {"mathvariant"}, "mn": {"mathvariant"}, "mtext": {"mathvariant"},
    "mspace": {"width"}, "mfrac": {"linethickness"}, "mtable": {"columnalign", "rowspacing"},
    "mtd": {"columnalign", "columnspan"}, "menclose": {"notation"}, "mpadded": {"width", "lspace"},
}
_PICTURE = re.compile(r"data:image/(png|jpeg|gif|webp);base64,[A-Za-z0-9+/=\s]*\Z")
_DISPLAY_MATH = re.compile(r"\$\$(.+?)\$\$", re.S)
_INLINE_MATH = re.compile(r"(?<![\\$])\$(?!\s)([^$\n]+?)(?<!\s)\$(?!\$)")
_INTERNAL = re.compile(r"__autograder\w*|\bcell-[0-9a-f]{6,}\b")
# An absolute path (two components or more) that is not part of a URL: keep its last component.
_PATH = re.compile(r"(?<![\w:/.~-])(?:/[^\s/\"'<>:()\[\],;]+){2,}/?")


def scrub_text(text: str) -> str:
    """`text` without grading-machine paths (each kept as its file name) or internal keys."""
    text = _PATH.sub(lambda m: m.group(0).rstrip("/").rsplit("/", 1)[-1], text)
    return _INTERNAL.sub("(internal)", text)


def _keep_attribute(tag: str, attribute: str, value: str) -> str | None:
    """nh3's last word on an attribute: pictures only embedded, links only to the web or a place
    in the page."""
    if tag == "img" and attribute == "src":
        return value if _PICTURE.match(value) else None
    if attribute == "href":
        return value if re.match(r"(https?:|mailto:|#)", value.strip(), re.I) else None
    return value


def sanitize(body: str) -> str:
    """An HTML fragment with nothing but the allow-list (TAGS, ATTRIBUTES, _keep_attribute)."""
    import nh3

    return nh3.clean(body, tags=TAGS, attributes=ATTRIBUTES, attribute_filter=_keep_attribute,
                     clean_content_tags={"script", "style", "noscript", "template", "title"},
                     url_schemes={"http", "https", "mailto", "data"}, strip_comments=True,
                     link_rel="noopener noreferrer")


def _mathml(tex: str, display: str) -> str:
    from latex2mathml.converter import convert

    try:
        return convert(tex.strip(), display=display)
    except Exception:  # TeX latex2mathml cannot read: shown as TeX rather than lost
        return f'<code class="tex">{html_text.escape(tex)}</code>'


def render_math(soup, limit: int = FORMULA_LIMIT) -> int:
    """Text with $...$ or $$...$$ outside code becomes MathML, in place (no MathJax needed): the
    first `limit` formulas, each of at most FORMULA_CHARS; the others stay as they are written.
    Formulas drawn before (a finished page's <math>, and <code class="tex"> for TeX latex2mathml
    could not read) count: finishing twice draws no more. Returns how many are drawn."""
    from bs4 import BeautifulSoup

    drawn = len(soup.find_all("math")) + len(soup.find_all("code", class_="tex"))

    def draw(match: re.Match, display: str) -> str:
        nonlocal drawn
        tex = html_text.unescape(match.group(1))
        if drawn >= limit or len(tex) > FORMULA_CHARS:
            return match.group(0)
        drawn += 1
        return _mathml(tex, display)

    for text in soup.find_all(string=re.compile(r"\$")):
        if drawn >= limit:
            break
        if text.find_parent(["pre", "code", "style", "script", "math", "title"]) is not None:
            continue
        escaped = html_text.escape(str(text), quote=False)
        rendered = _DISPLAY_MATH.sub(lambda m: draw(m, "block"), escaped)
        rendered = _INLINE_MATH.sub(lambda m: draw(m, "inline"), rendered)
        if rendered != escaped:
            text.replace_with(BeautifulSoup(rendered, "html.parser"))
    return drawn


def _bounded(soup, size: int) -> None:
    """Each text cut at TEXT_LIMIT characters; pictures left out, last first, while the page
    (about `size` bytes) is past PAGE_LIMIT."""
    for text in soup.find_all(string=True):
        if len(text) > TEXT_LIMIT and text.parent is not None and text.parent.name != "style":
            text.replace_with(str(text)[:TEXT_LIMIT - 100] + f" [... cut: {len(text) - TEXT_LIMIT + 100} more characters]")
    pictures = soup.find_all("img") if size > PAGE_LIMIT else []
    for img in reversed(pictures):
        if size <= PAGE_LIMIT:
            break
        size -= len(img.get("src", ""))
        img.replace_with("[a picture left out: the page is too large]")


def finish_html(html: str, titles: dict[str, str]) -> str:
    """nbgrader feedback HTML -> safe, self-contained, cells named by `titles` (grade_id -> title).

    A finished page goes through unchanged, so that finishing twice changes nothing without a
    mark in the page saying it is finished (a student's cell could write that mark)."""
    return _finish_once(html, titles)


def _finish_once(html: str, titles: dict[str, str]) -> str:
    from bs4 import BeautifulSoup, Comment

    soup = BeautifulSoup(html, "html.parser")
    styles = [str(style.string or "").strip() for style in (soup.head.find_all("style") if soup.head else [])]
    title = soup.title.get_text() if soup.title else "Feedback"
    for comment in soup.find_all(string=lambda s: isinstance(s, Comment)):
        comment.extract()
    anchors = {}  # grade_id (or comment-<grade_id>) -> neutral anchor
    for n, gid in enumerate(titles, start=1):
        anchors[gid] = f"check-{n}"
        anchors[f"comment-{gid}"] = f"check-{n}"
    for a in soup.find_all("a"):
        href, name = a.get("href", ""), a.get("name")
        if href.startswith("#") and href[1:] in anchors:
            key = href[1:]
            a["href"] = "#" + anchors[key]
            a.string = titles[key.removeprefix("comment-")]
        if name in anchors:  # the cell's panel: "Grade cell: <code>id</code>", "Student's answer"
            a["name"] = anchors[name]
            label = a.find_next("span", class_="nbgrader-label")
            if label is not None:
                label.string = titles[name.removeprefix("comment-")]
    for tag in soup.find_all(id=True):
        if str(tag["id"]).startswith("cell-id="):
            del tag["id"]
    for text in soup.find_all(string=True):
        if text.parent is not None and text.parent.name in ("style",):
            continue
        cleaned = scrub_text(str(text))
        if cleaned != str(text):
            text.replace_with(cleaned)
    body = soup.body if soup.body is not None else soup
    for nested in body.find_all(["body", "html", "head"]):  # nbgrader's template nests a body
        nested.unwrap()
    render_math(body)
    _bounded(body, len(html))
    inner = "".join(str(child) for child in body.children)
    css = "\n".join(s for s in styles if "</" not in s)  # the template's own stylesheet
    return ("<!DOCTYPE html>\n<html>\n<head>\n<meta charset=\"utf-8\">\n"
            f"<title>{html_text.escape(title)}</title>\n<style>\n{css}\n</style>\n</head>\n"
            f"<body>\n{_spaces_between_tags(sanitize(inner))}\n</body>\n</html>\n")


def _spaces_between_tags(fragment: str) -> str:
    """Blank space between two tags as the HTML parser reads it back (a newline, or one space),
    outside <pre>: a finished page then reads back the same, and finishing it again changes nothing."""
    parts = re.split(r"(<pre\b.*?</pre>)", fragment, flags=re.S | re.I)
    for i in range(0, len(parts), 2):
        parts[i] = re.sub(r">([ \t\r\n\f]+)<", lambda m: ">\n<" if "\n" in m.group(1) else "> <", parts[i])
    return "".join(parts)


class PageTooLarge(ValueError):
    """A finished page past PAGE_BYTES_LIMIT: not written."""


def _cut(text: str, keep: int) -> str:
    if len(text) <= keep:
        return text
    return text[:keep] + f"\n[... cut: {len(text) - keep} more characters]"


def _is_picture(mime: str) -> bool:
    return mime.startswith("image/") and mime != "image/svg+xml"


def cap_notebook(nb) -> list[str]:
    """Cut `nb` in place to what a feedback page shows (see the module's docstring): each text at
    TEXT_LIMIT, all texts at NOTEBOOK_TEXT_LIMIT (a cell with a grade_id, a cell of the source,
    keeps GRADED_TEXT characters of its texts past it), CELL_LIMIT cells besides those, pictures
    and attachments up to PAGE_LIMIT bytes, cell metadata but nbgrader's dropped. Returns what was cut ('characters
    cut: 19000000'), one line each."""
    left, floor, pictures, cut = NOTEBOOK_TEXT_LIMIT, 0, PAGE_LIMIT, {}

    def text(value) -> str:
        nonlocal left, floor
        value = "".join(value) if isinstance(value, list) else str(value)
        keep = min(TEXT_LIMIT, max(left, floor))
        left, floor = max(0, left - min(len(value), keep)), max(0, floor - min(len(value), keep))
        if len(value) > keep:
            cut["characters cut"] = cut.get("characters cut", 0) + len(value) - keep
        return _cut(value, keep)

    def picture(data) -> bool:
        nonlocal pictures
        pictures -= len("".join(data) if isinstance(data, list) else str(data))
        if pictures < 0:
            cut["pictures left out"] = cut.get("pictures left out", 0) + 1
        return pictures >= 0

    kept, others, dropped = [], 0, 0
    for cell in nb.cells:
        floor = GRADED_TEXT if grade_id(cell) is not None else 0  # this cell's texts, past the limit
        if not floor:
            others += 1
            if others > CELL_LIMIT:
                dropped += 1
                continue
        cell.metadata = {k: v for k, v in cell.get("metadata", {}).items() if k == "nbgrader"}
        cell.source = text(cell.get("source", ""))
        for name, bundle in list(cell.get("attachments", {}).items()):
            if not all(picture(data) for mime, data in bundle.items() if _is_picture(mime)):
                del cell.attachments[name]
        for output in cell.get("outputs", []):
            for key in ("text", "evalue"):
                if key in output:
                    output[key] = text(output[key])
            if "traceback" in output:  # one text, as the page shows it
                output["traceback"] = [text("\n".join(map(str, output["traceback"])))]
            data = output.get("data", {})
            for mime in list(data):
                if _is_picture(mime):
                    if not picture(data[mime]):
                        del data[mime]
                elif isinstance(data[mime], (str, list)):
                    data[mime] = text(data[mime])
            if "data" in output and not data:
                data["text/plain"] = "[a picture left out: the page is too large]"
        kept.append(cell)
    if dropped:
        import nbformat

        kept.append(nbformat.v4.new_markdown_cell(
            f"[{dropped} more cells are not shown: a feedback page shows at most {CELL_LIMIT} cells "
            "besides the graded ones]"))
        cut["cells left out"] = dropped
    nb.cells = kept
    return [f"{what}: {n}" for what, n in cut.items()]


def short_page(assignment: str, student_id: str, scores: dict[str, float], source_notebook: Path,
               why: str) -> str:
    """The page a student gets when theirs could not be made within the limits: why, in one
    sentence, and the score of each test (the grade is what grade gave, whatever the page)."""
    model = exercises.of_notebook(source_notebook)
    titles, points = model.titles(), model.test_points()
    rows = "".join(f"<tr><td>{html_text.escape(titles.get(gid, 'a test'))}</td>"
                   f"<td>{scores.get(gid, 0.0):g} / {most:g}</td></tr>\n" for gid, most in points.items())
    total = sum(scores.get(gid, 0.0) for gid in points)
    return ("<!DOCTYPE html>\n<html>\n<head>\n<meta charset=\"utf-8\">\n"
            f"<title>{html_text.escape(assignment)}: feedback</title>\n</head>\n<body>\n"
            f"<h1>{html_text.escape(assignment)}: feedback for {html_text.escape(safe_line(student_id))}</h1>\n"
            f"<p>Your notebook's feedback page could not be made: {html_text.escape(why)}. Your grade "
            f"is not affected: {total:g} / {sum(points.values()):g}, test by test below.</p>\n"
            f"<table>\n{rows}</table>\n</body>\n</html>\n")


def finish(html_path: Path, source_notebook: Path) -> None:
    """Rewrite one feedback file in place (see the module's docstring); idempotent."""
    html_path = Path(html_path)
    titles = exercises.of_notebook(source_notebook).titles()
    html = html_path.read_text(encoding="utf-8")
    finished = finish_html(html, titles)
    if finished != html:
        atomic_write(html_path, finished)


def render(template_dir: Path, assignment: str, student_id: str, autograded: Path,
           scores: dict[str, float], html_path: Path, source_notebook: Path,
           page_limit: int = PAGE_BYTES_LIMIT) -> None:
    """Make one student's feedback page from what `grade` kept: the executed notebook
    (DIR/autograded/...) and the scores of its test cells (grades.json, the trusted run's verdicts
    in them), then finish it (see the module's docstring). Written whole or not at all; PageTooLarge
    when the finished page is past `page_limit` bytes. Call it through autograder/engine/page_server.py,
    which bounds its time and memory: the notebook is a student's.

    nbgrader's GenerateFeedback makes the page, in a course folder of its own whose gradebook, a copy
    of the template's (autograder/engine/template.py), holds this one submission as nbgrader's
    SaveAutoGrades reads it from the executed notebook, with these scores: the page `grade
    --feedback` writes while grading (tests/batch/test_grade.py compares them), made when it is
    asked for. No kernel runs.
    """
    import tempfile
    import warnings

    from nbgrader.api import Gradebook
    from nbgrader.converters import GenerateFeedback
    from nbgrader.coursedir import CourseDirectory
    from nbgrader.preprocessors import SaveAutoGrades
    from sqlalchemy.exc import SAWarning

    from autograder.engine.nbgrader_setup import load_config, nbgrader_log
    from autograder.engine.template import course_from_template

    student = "student"  # the one student of a course folder made for this page; the page names none
    html_path = Path(html_path)
    with tempfile.TemporaryDirectory(prefix=f"feedback-{assignment}-") as tmp:
        course = Path(tmp)
        course_from_template(course, template_dir, assignment, course / "gradebook.db")
        notebook = course / "autograded" / student / assignment / f"{assignment}.ipynb"
        notebook.parent.mkdir(parents=True)
        nb = read_notebook(autograded)
        cap_notebook(nb)  # before nbconvert renders it: markdown is not capped when it is executed
        write_notebook(nb, notebook)
        config = load_config(course)
        db_url = config.CourseDirectory.db_url
        with Gradebook(db_url, config.CourseDirectory.course_id) as gb, warnings.catch_warnings():
            # nbgrader's own autoflush notice while it adds the submission (as in its autograde)
            warnings.simplefilter("ignore", SAWarning)
            gb.update_or_create_student(student)
            gb.update_or_create_submission(assignment, student)
        # What nbgrader's autograde saved from the executed notebook (scores, and "No response."
        # on an answer left as released), then the scores grade recorded over them: the trusted
        # run's withdrawals are only there.
        SaveAutoGrades(config=config).preprocess(read_notebook(notebook), {"nbgrader": {
            "notebook": assignment, "assignment": assignment, "student": student, "db_url": db_url}})
        with Gradebook(db_url, config.CourseDirectory.course_id) as gb:
            for grade in gb.find_submission_notebook(assignment, assignment, student).grades:
                if grade.name in scores:
                    grade.auto_score = float(scores[grade.name])
            gb.db.commit()
        with nbgrader_log("feedback") as (logger, log):
            coursedir = CourseDirectory(config=config, log=logger)
            coursedir.assignment_id, coursedir.student_id = assignment, student
            try:
                GenerateFeedback(coursedir=coursedir, config=config, log=logger).start()
            except Exception as error:
                raise RuntimeError(f"nbgrader generate_feedback failed for {student_id}/{assignment}: "
                                   f"{error}\n{log.getvalue()[-2000:]}") from None
        made = course / "feedback" / student / assignment / f"{assignment}.html"
        page = finish_html(made.read_text(encoding="utf-8"), exercises.of_notebook(source_notebook).titles())
        size = len(page.encode("utf-8"))
        if size > page_limit:
            raise PageTooLarge(f"the page would be {size:,} bytes, more than the {page_limit:,} a "
                               "feedback page may be")
        atomic_write(html_path, page)
