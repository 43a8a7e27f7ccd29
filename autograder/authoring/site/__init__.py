"""`python -m autograder site [--out DIR]`: the course website, from the notebooks, offline.

One HTML page per lecture notebook (notebooks/, executed here with nbclient, plots embedded, the
setup cell left out),
one per assignment (release/: its prose, the markdown cells, with a link to open the notebook in
Colab), the instructor's guide (docs/instructors.md), each with a sidebar and previous / next
links, and an index (templates/site_index.html.j2). Written to DIR (default build/site/), whole or
not at all; `publish.yml` pushes it to the student repository's gh-pages branch.

Why nbconvert and not Jupyter Book 2 / MyST (mystmd): `myst build --html` fetches its theme and
template information from the network at build time (jupyter-book/mystmd#1451), so it cannot
build where only package registries are reachable, and its pages load scripts. nbconvert's
HTMLExporter renders a notebook from what is installed: the page template here
(templates/course/) is its lab template with every <script> left out and the CSS inlined;
outputs' images are embedded as data URIs; math ($...$, $$...$$) becomes MathML with latex2mathml, which
browsers render natively. Every page is then one self-contained file: nothing from a CDN.
"""

from __future__ import annotations

import argparse
import html
import re
import shutil
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

import jinja2
import nbformat
from nbformat import NotebookNode

from autograder.course.layout import Course
from autograder.course.settings import colab_url, course_settings, project_metadata

TEMPLATES = Path(__file__).resolve().parent / "templates"
PAGE_TEMPLATE = "course"
INDEX_TEMPLATE = "site_index.html.j2"
LECTURES_DIR = "notebooks"
CELL_TIMEOUT = 600  # seconds per lecture cell: the notebooks budget 60 s in all on a 2-core CPU

_CODE = re.compile(r"(```.*?```|`[^`\n]*`)", re.S)  # math inside code stays as it is
_DISPLAY_MATH = re.compile(r"\$\$(.+?)\$\$", re.S)
_INLINE_MATH = re.compile(r"(?<![\\$\w])\$(?=\S)([^$\n]+?)(?<=\S)\$(?![\w$])")


class SiteError(RuntimeError):
    """A page could not be built; the message names the notebook and the cell."""


@dataclass(frozen=True)
class Page:
    """One page of the site and its line in the index."""

    href: str
    title: str
    summary: str
    colab_url: str


# -- markdown -----------------------------------------------------------------------------------

def _mathml(tex: str, display: str) -> str:
    from latex2mathml.converter import convert

    try:
        return convert(tex.strip(), display=display)
    except Exception:  # TeX latex2mathml cannot read: shown as TeX rather than lost
        return f"<code>{html.escape(tex)}</code>"


def math_to_mathml(markdown: str) -> str:
    """`markdown` with $$display$$ and $inline$ math replaced by MathML (code spans untouched)."""
    parts = _CODE.split(markdown)
    for i in range(0, len(parts), 2):  # even parts are outside code
        text = _DISPLAY_MATH.sub(lambda m: _mathml(m.group(1), "block"), parts[i])
        parts[i] = _INLINE_MATH.sub(lambda m: _mathml(m.group(1), "inline"), text)
    return "".join(parts)


SUMMARY_CHARS = 240  # an index entry's summary: whole sentences up to this length
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9(])")


def whole_sentences(text: str, limit: int = SUMMARY_CHARS) -> str:
    """The sentences of `text` that fit in `limit` characters, never one cut in the middle (the
    first sentence whole when it alone is longer)."""
    kept = ""
    for sentence in _SENTENCE_END.split(text):
        candidate = f"{kept} {sentence}".strip()
        if kept and len(candidate) > limit:
            break
        kept = candidate
    return kept


def title_and_summary(nb: NotebookNode, fallback: str) -> tuple[str, str]:
    """The first heading of the notebook and the first paragraph after it (plain text, whole
    sentences up to SUMMARY_CHARS)."""
    title, summary = fallback, ""
    for cell in nb.cells:
        if cell.cell_type != "markdown":
            continue
        for block in re.split(r"\n\s*\n", cell.source.strip()):
            block = block.strip()
            if block.startswith("#") and title == fallback:
                title = block.splitlines()[0].lstrip("#").strip()
            elif block and not block.startswith(("#", "|", "```", "-", "*", ">")):
                summary = re.sub(r"[*`$]|(?<!\w)_+|_+(?!\w)", "", " ".join(block.split()))
                break
        if summary:
            break
    return title, whole_sentences(summary)


# -- pages --------------------------------------------------------------------------------------

def execute(nb: NotebookNode, folder: Path, timeout: int, name: str) -> None:
    """Run `nb` top to bottom in `folder` (in place); SiteError names the cell that raised."""
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError

    client = NotebookClient(nb, timeout=timeout, kernel_name="python3",
                            resources={"metadata": {"path": str(folder)}})
    try:
        client.execute()
    except CellExecutionError as error:
        raise SiteError(f"{name}: a cell raised while executing: "
                        f"{str(error).strip().splitlines()[-1][:300]}") from None


def render(nb: NotebookNode, resources: dict) -> str:
    """One self-contained HTML page (templates/course/): no script, images embedded."""
    from nbconvert import HTMLExporter

    nb = nbformat.from_dict(nb)
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            cell.source = math_to_mathml(cell.source)
    # Outputs' images are embedded as data URIs anyway. embed_images (markdown images) stays off:
    # it re-parses every raw HTML fragment on its own and so breaks the MathML apart.
    exporter = HTMLExporter(template_name=PAGE_TEMPLATE, extra_template_basedirs=[str(TEMPLATES)],
                            exclude_input_prompt=True, exclude_output_prompt=True)
    body, _ = exporter.from_notebook_node(nb, resources=resources)
    return body


def without_plumbing(nb: NotebookNode) -> NotebookNode:
    """`nb` without its setup cell (the first code cell holding `device = helpers.setup()`:
    installing the course on Colab, seeding), which a reader of the site has no use for."""
    from autograder.authoring.setup_cell import ANCHOR

    first = next((c for c in nb.cells if c.cell_type == "code"), None)
    if first is None or ANCHOR not in first.source:
        return nb
    shown = nbformat.from_dict(nb)
    shown.cells = [c for c in nb.cells if c is not first]
    return shown


def page_href(path: Path, kind: str) -> str:
    return f"{kind}-{path.stem}.html"


def navigation(pages: list[tuple[str, str]], href: str) -> dict:
    """The sidebar and previous / next links of the page `href` among `pages` (href, title)."""
    at = [h for h, _ in pages].index(href)
    return {"pages": pages, "current": href, "prev": pages[at - 1] if at > 0 else None,
            "next": pages[at + 1] if at + 1 < len(pages) else None}


def lecture_page(path: Path, root: Path, out: Path, title: str, timeout: int,
                 pages: list[tuple[str, str]] | None = None) -> Page:
    """Execute a lecture notebook and write its page (without the setup cell); its index entry.
    pages: every page of the site, (href, title), for the sidebar and previous / next."""
    nb = nbformat.read(path, as_version=4)
    name, summary = title_and_summary(nb, path.stem)
    execute(nb, path.parent, timeout, path.relative_to(root).as_posix())
    nb = without_plumbing(nb)
    relative = path.relative_to(root).as_posix()
    href = page_href(path, "lecture")
    colab = colab_url(relative)
    (out / href).write_text(render(nb, {"course_title": title, "colab_url": colab,
                                        "metadata": {"name": name},
                                        "nav": navigation(pages or [(href, name)], href)}),
                            encoding="utf-8")
    return Page(href, name, summary, colab)


def assignment_page(path: Path, root: Path, out: Path, title: str,
                    pages: list[tuple[str, str]] | None = None) -> Page:
    """Write the page of a release notebook's prose (its markdown cells); its index entry."""
    nb = nbformat.read(path, as_version=4)
    name, summary = title_and_summary(nb, path.stem)
    prose = nbformat.v4.new_notebook(metadata=nb.metadata,
                                     cells=[c for c in nb.cells if c.cell_type == "markdown"])
    relative = path.relative_to(root).as_posix()
    href = page_href(path, "assignment")
    colab = colab_url(relative)
    (out / href).write_text(render(prose, {"course_title": title, "colab_url": colab,
                                           "metadata": {"name": name},
                                           "nav": navigation(pages or [(href, name)], href)}),
                            encoding="utf-8")
    return Page(href, name, summary, colab)


GUIDE = Path("docs") / "instructors.md"
GUIDE_HREF = "instructors.html"
_MD_LINK = re.compile(r"\[([^\]]+)\]\((?!https?:|#)[^)]*\)")


def guide_page(root: Path, out: Path, title: str, pages: list[tuple[str, str]]) -> Page | None:
    """docs/instructors.md as a page of the site (links to files of the private repository
    become plain text); None when the course has no such file."""
    path = root / GUIDE
    if not path.is_file():
        return None
    text = _MD_LINK.sub(r"\1", path.read_text(encoding="utf-8"))
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell(text)])
    name, summary = title_and_summary(nb, "The instructor's guide")
    (out / GUIDE_HREF).write_text(render(nb, {"course_title": title, "colab_url": "",
                                              "metadata": {"name": name},
                                              "nav": navigation(pages, GUIDE_HREF)}),
                                  encoding="utf-8")
    return Page(GUIDE_HREF, name, summary, "")


def index_page(lectures: list[Page], assignments: list[Page], guide: Page | None = None) -> str:
    """The site's index.html."""
    meta = project_metadata()
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(str(TEMPLATES)), autoescape=False)
    return env.get_template(INDEX_TEMPLATE).render(
        title="PyTorch, from NumPy backprop to GPU batch timing", description=meta["description"],
        repository_url=f"https://github.com/{course_settings().student_repository}",
        lectures=lectures, assignments=assignments, guide=guide,
        built=f"from version {meta['version']}")


def build_site(course: Course, out: Path, lectures: list[str] | None = None,
               assignments: list[str] | None = None, timeout: int = CELL_TIMEOUT,
               progress=print) -> Path:
    """Build the site into `out` (replaced whole on success); returns `out`.

    lectures: stems of notebooks/*.ipynb (default: all); assignments: names (default: all of
    release/).
    """
    root = course.root
    lecture_paths = sorted((root / LECTURES_DIR).glob("*.ipynb"))
    if lectures is not None:
        known = {p.stem: p for p in lecture_paths}
        missing = [n for n in lectures if n not in known]
        if missing:
            raise SiteError(f"no lecture notebook {', '.join(missing)} in {root / LECTURES_DIR} "
                            f"(found: {', '.join(known) or 'none'})")
        lecture_paths = [known[n] for n in lectures]
    names = course.select(assignments) if assignments is not None else course.assignments()
    release_paths = [course.release_notebook(a) for a in names if course.release_notebook(a).is_file()]
    title = "PyTorch course"
    out = Path(out).resolve()
    out.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=".site-", dir=out.parent) as tmp:
        stage = Path(tmp) / "site"
        stage.mkdir()
        pages = [(page_href(p, kind), title_and_summary(nbformat.read(p, as_version=4), p.stem)[0])
                 for kind, paths in (("lecture", lecture_paths), ("assignment", release_paths))
                 for p in paths]
        if (root / GUIDE).is_file():
            pages.append((GUIDE_HREF, "The instructor's guide"))
        lecture_pages = []
        for path in lecture_paths:
            progress(f"  executing {path.relative_to(root)}")
            lecture_pages.append(lecture_page(path, root, stage, title, timeout, pages))
        assignment_pages = [assignment_page(p, root, stage, title, pages) for p in release_paths]
        guide = guide_page(root, stage, title, pages)
        (stage / "index.html").write_text(index_page(lecture_pages, assignment_pages, guide),
                                          encoding="utf-8")
        (stage / ".nojekyll").write_text("")  # GitHub Pages: serve the files as they are
        if out.exists():
            shutil.rmtree(out)
        stage.rename(out)
    return out


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--out", type=Path, default=None, help="output folder (default: build/site)")
    parser.add_argument("--lecture", action="append", default=None, metavar="NAME",
                        help="only this lecture notebook (its stem; repeatable; default: all)")
    parser.add_argument("--assignment", "-a", action="append", default=None, metavar="ASSIGNMENT",
                        help="only this assignment (repeatable; default: all)")
    parser.add_argument("--timeout", type=int, default=CELL_TIMEOUT,
                        help=f"seconds per lecture cell (default {CELL_TIMEOUT})")


def run(args: argparse.Namespace, course: Course) -> int:
    out = args.out or course.build_dir / "site"
    try:
        site = build_site(course, out, args.lecture, args.assignment, args.timeout,
                          progress=lambda line: print(line, file=sys.stderr, flush=True))
    except SiteError as error:
        print(f"site: {error}; nothing was written", file=sys.stderr)
        return 1
    pages = sorted(p.name for p in site.glob("*.html"))
    print(f"Built {site}: {len(pages)} pages; open {site / 'index.html'}")
    return 0
