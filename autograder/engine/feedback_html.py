"""Feedback a student can keep: nbgrader's feedback HTML made safe, self-contained and readable.

`finish(html_path, source_notebook)` rewrites one feedback file in place (grade.py calls it on
every file it writes; running it twice changes nothing). Whatever the student's cells hold:
  - the page is rebuilt from an allow-list (nh3, the Rust `ammonia` sanitizer): the template's
    own stylesheet, then the body with only the tags and attributes listed below, no event
    handler, no `javascript:` or remote URL, no script, form, frame, object, meta or link; an
    image only as an embedded picture (data:image/...). Nothing in it runs, loads or redirects;
    it opens offline, in a mail client, in an LMS's preview;
  - maths in the text ($...$, $$...$$) becomes MathML (latex2mathml), which browsers draw
    without MathJax's script;
  - each text is cut at TEXT_LIMIT characters and pictures dropped beyond PAGE_LIMIT bytes, so
    that no page grows past about PAGE_LIMIT whatever was printed (autograder/engine/execute.py caps
    the outputs before them);
  - every graded cell is named by what it checks, the first line of its docstring
    ("scale multiplies every element by the factor."), instead of "Test cell" and its grade_id;
    an answer cell by the function or class it defines;
  - no internal key (grade_id, `cell-…` ids, `__autograder…` names) and no path of the grading
    machine (/tmp/…, /work/…, the kernel's job folder): a path keeps only its file name.

`python -m autograder feedback` (autograder/classroom/feedback.py) packs the files per student.
"""

from __future__ import annotations

import html as html_text
import re
from pathlib import Path

from autograder.course import exercises
from autograder.course.atomic import atomic_write
from autograder.course.notebooks import read_notebook

TEXT_LIMIT = 100_000  # characters of one text (a cell's source, an output) kept
PAGE_LIMIT = 8 << 20  # bytes of a page past which embedded pictures are left out
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
        return f"<code>{html_text.escape(tex)}</code>"


def render_math(soup) -> None:
    """Text with $...$ or $$...$$ outside code becomes MathML, in place (no MathJax needed)."""
    from bs4 import BeautifulSoup

    for text in list(soup.find_all(string=re.compile(r"\$"))):
        if text.find_parent(["pre", "code", "style", "script", "math", "title"]) is not None:
            continue
        escaped = html_text.escape(str(text), quote=False)
        rendered = _DISPLAY_MATH.sub(lambda m: _mathml(html_text.unescape(m.group(1)), "block"), escaped)
        rendered = _INLINE_MATH.sub(lambda m: _mathml(html_text.unescape(m.group(1)), "inline"), rendered)
        if rendered != escaped:
            text.replace_with(BeautifulSoup(rendered, "html.parser"))


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


def finish(html_path: Path, source_notebook: Path) -> None:
    """Rewrite one feedback file in place (see the module's docstring); idempotent."""
    html_path = Path(html_path)
    titles = exercises.of_notebook(source_notebook).titles()
    html = html_path.read_text(encoding="utf-8")
    finished = finish_html(html, titles)
    if finished != html:
        atomic_write(html_path, finished)


def render(template_dir: Path, assignment: str, student_id: str, autograded: Path,
           scores: dict[str, float], html_path: Path, source_notebook: Path) -> None:
    """Make one student's feedback page from what `grade` kept: the executed notebook
    (DIR/autograded/...) and the scores of its test cells (grades.json, the trusted run's verdicts
    in them), then finish it (see the module's docstring). Written whole or not at all.

    nbgrader's GenerateFeedback makes the page, in a course folder of its own whose gradebook, a copy
    of the template's (autograder/engine/template.py), holds this one submission as nbgrader's
    SaveAutoGrades reads it from the executed notebook, with these scores: the page `grade
    --feedback` writes while grading (tests/batch/test_grade.py compares them), made when it is
    asked for. No kernel runs.
    """
    import shutil
    import tempfile
    import warnings

    from nbgrader.api import Gradebook
    from nbgrader.converters import GenerateFeedback
    from nbgrader.coursedir import CourseDirectory
    from nbgrader.preprocessors import SaveAutoGrades
    from sqlalchemy.exc import SAWarning

    from autograder.engine.job import safe_id
    from autograder.engine.nbgrader_setup import load_config, nbgrader_log
    from autograder.engine.template import course_from_template

    student = safe_id(student_id)
    html_path = Path(html_path)
    with tempfile.TemporaryDirectory(prefix=f"feedback-{assignment}-") as tmp:
        course = Path(tmp)
        course_from_template(course, template_dir, assignment, course / "gradebook.db")
        notebook = course / "autograded" / student / assignment / f"{assignment}.ipynb"
        notebook.parent.mkdir(parents=True)
        shutil.copyfile(autograded, notebook)
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
        atomic_write(html_path, finish_html(made.read_text(encoding="utf-8"),
                                            exercises.of_notebook(source_notebook).titles()))
