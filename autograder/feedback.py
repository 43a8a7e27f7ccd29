"""Feedback a student can keep: nbgrader's feedback HTML made self-contained and readable.

`finish(html_path, source_notebook)` rewrites one feedback file in place (grade.py calls it on
every file it writes; running it twice changes nothing):
  - no script and no stylesheet from elsewhere: nbgrader's template loads MathJax from a CDN
    (and nothing in the feedback needs JavaScript); the file opens offline, in a mail client,
    in an LMS's preview;
  - every graded cell is named by what it checks, the first line of its docstring
    ("scale multiplies every element by the factor."), instead of "Test cell" and its grade_id;
    an answer cell by the function or class it defines;
  - no internal key (grade_id, `cell-…` ids, `__autograder…` names) and no path of the grading
    machine (/tmp/…, /work/…, the kernel's job folder): a path keeps only its file name.

`python -m autograder feedback` (autograder/feedback_archive.py) packs the files per student.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

from autograder.notebooks import grade_id, is_solution, is_test, read_notebook

MARK = "autograder-feedback"  # <meta name=MARK>: this file is finished already
_INTERNAL = re.compile(r"__autograder\w*|\bcell-[0-9a-f]{6,}\b")
# An absolute path (two components or more) that is not part of a URL: keep its last component.
_PATH = re.compile(r"(?<![\w:/.~-])(?:/[^\s/\"'<>:()\[\],;]+){2,}/?")


def docstring_title(source: str) -> str:
    """The first line of the docstring a cell's code opens with; '' when there is none."""
    try:
        tree = ast.parse(source)
    except SyntaxError:  # a hidden region or IPython magic: read the first line instead
        match = re.match(r'\s*[rRuU]?("""|\'\'\'|"|\')\s*(.+?)\s*(\1|$)', source)
        return match.group(2).strip() if match else ""
    doc = ast.get_docstring(tree) or ""
    return doc.strip().splitlines()[0].strip() if doc.strip() else ""


def _defined_name(source: str) -> str:
    match = re.search(r"^\s*(?:def|class)\s+(\w+)", source, flags=re.M)
    return match.group(1) if match else ""


def cell_titles(source_nb) -> dict[str, str]:
    """grade_id -> what a student reads for it: a test's docstring line, an answer's name."""
    titles: dict[str, str] = {}
    tests = answers = 0
    for cell in source_nb.cells:
        gid = grade_id(cell)
        if not gid:
            continue
        if is_test(cell):
            tests += 1
            titles[gid] = docstring_title(cell.source) or f"Test {tests}"
        elif is_solution(cell):
            answers += 1
            name = _defined_name(cell.source)
            titles[gid] = f"Your answer: {name}" if name else f"Your answer {answers}"
    return titles


def scrub_text(text: str) -> str:
    """`text` without grading-machine paths (each kept as its file name) or internal keys."""
    text = _PATH.sub(lambda m: m.group(0).rstrip("/").rsplit("/", 1)[-1], text)
    return _INTERNAL.sub("(internal)", text)


def finish_html(html: str, titles: dict[str, str]) -> str:
    """nbgrader feedback HTML -> self-contained, cells named by `titles` (grade_id -> title)."""
    from bs4 import BeautifulSoup, Comment

    soup = BeautifulSoup(html, "html.parser")
    if soup.find("meta", attrs={"name": MARK}):
        return html
    for tag in soup.find_all(["script", "noscript", "iframe", "object", "embed"]):
        tag.decompose()
    for link in soup.find_all("link"):
        if "stylesheet" in (link.get("rel") or []) or re.match(r"(https?:)?//", link.get("href", "")):
            link.decompose()
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
        if tag["id"].startswith("cell-id="):
            del tag["id"]
    for text in soup.find_all(string=True):
        if text.parent is not None and text.parent.name in ("style",):
            continue
        cleaned = scrub_text(str(text))
        if cleaned != str(text):
            text.replace_with(cleaned)
    head = soup.head or soup
    head.insert(0, soup.new_tag("meta", attrs={"name": MARK, "content": "self-contained"}))
    return str(soup)


def finish(html_path: Path, source_notebook: Path) -> None:
    """Rewrite one feedback file in place (see the module's docstring); idempotent."""
    html_path = Path(html_path)
    titles = cell_titles(read_notebook(source_notebook))
    html = html_path.read_text(encoding="utf-8")
    finished = finish_html(html, titles)
    if finished != html:
        tmp = html_path.with_name(html_path.name + ".tmp")
        tmp.write_text(finished, encoding="utf-8")
        tmp.replace(html_path)
