"""`python -m autograder site [--out DIR] [--now TIME] [--published OUT]`: the course website.

What a student sees, and nothing else: the site is built from the student repository's tree as
`publish` would write it at that moment (autograder/authoring/student_tree.py: the assignments the
calendar has released, with those published in OUT before; the lecture notebooks; the leak search
and the calendar gate passed), never from the instructor's folders. So no assignment shows before
its release time and no page of the instructor's side (docs/, answers) is on it.

Sphinx with myst-nb and sphinx-book-theme builds it: what Jupyter Book 1 runs, without the
extensions of its own that the site does not use (bibtex, LaTeX, thebe, comments: 22 packages to
install against its 36, and Jupyter Book 1 holds Sphinx below 8). A page per lecture notebook
(executed here with nbclient; the setup cell removed by its `remove-cell` tag), per assignment
(its prose, the markdown cells of the student notebook, with a link to open the notebook in
Colab), and an index (templates/index.md.j2) whose toctrees make the sidebar and the previous /
next links; Sphinx's own search index serves the search box. Written to DIR (default
build/site/), whole or not at all; `publish.yml` builds it after `publish` (`--published` the
student repository's clone) and pushes it to the student repository's gh-pages branch.

Offline: every file comes from what pip installed (the theme's CSS, JS and fonts); math becomes
MathML (autograder/authoring/site/mathml.py), not MathJax from a CDN. Jupyter Book 2 (mystmd) fetches its
theme from the network while building (jupyter-book/mystmd#1451), so it is not used. The
configuration, each setting with its reason: autograder/authoring/site/config.py; each page's title and
summary (whole sentences): autograder/authoring/site/summary.py.
"""

from __future__ import annotations

import argparse
import io
import shutil
import sys
import tempfile
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

import jinja2
import nbformat
import yaml
from nbformat import NotebookNode

from autograder.authoring.site.config import sphinx_config
from autograder.authoring.site.summary import title_and_summary
from autograder.authoring.student_tree import PublishError, iso_time, stage_tree
from autograder.course.layout import Course
from autograder.course.settings import SettingsError, project_metadata

TEMPLATES = Path(__file__).resolve().parent / "templates"
INDEX_TEMPLATE = "index.md.j2"
LECTURES_DIR = "notebooks"
CELL_TIMEOUT = 600  # seconds per lecture cell: the notebooks budget 60 s in all on a 2-core CPU
TITLE = "PyTorch, from NumPy backprop to GPU batch timing"
REMOVE = "remove-cell"  # myst-nb leaves a cell so tagged out of the page (and the search index)


class SiteError(RuntimeError):
    """A page could not be built; the message names the notebook and the cell."""


@dataclass(frozen=True)
class Page:
    """One page of the site: its source file in Sphinx's source folder, and its index entry."""

    source: str
    title: str
    summary: str
    colab_url: str


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


def hide_plumbing(nb: NotebookNode) -> NotebookNode:
    """Tag `nb`'s setup cell (the first code cell holding `device = helpers.setup()`: installing
    the course on Colab, seeding) `remove-cell`: a reader of the site has no use for it."""
    from autograder.authoring.setup_cell import ANCHOR

    first = next((c for c in nb.cells if c.cell_type == "code"), None)
    if first is not None and ANCHOR in first.source:
        tags = first.metadata.setdefault("tags", [])
        if REMOVE not in tags:
            tags.append(REMOVE)
    return nb


def with_colab_link(nb: NotebookNode, url: str) -> NotebookNode:
    """`nb` with a link to open it in Colab right under its title (first if it has none)."""
    link = f"[Open this notebook in Colab]({url})"
    for cell in nb.cells:
        lines = cell.source.splitlines() if cell.cell_type == "markdown" else []
        at = next((i for i, line in enumerate(lines) if line.startswith("# ")), None)
        if at is not None:
            cell.source = "\n".join([*lines[:at + 1], "", link, "", *lines[at + 1:]])
            return nb
    nb.cells.insert(0, nbformat.v4.new_markdown_cell(link))
    return nb


def with_description(nb: NotebookNode, summary: str) -> NotebookNode:
    """`nb` with its summary as the page's <meta name="description"> (front matter to myst-nb)."""
    if summary:
        nb.metadata["myst"] = {"html_meta": {"description": summary}}
    return nb


def lecture_page(path: Path, tree: Path, course: Course, stage: Path, timeout: int) -> Page:
    """Execute a lecture notebook of the student `tree` and stage it for Sphinx (setup cell tagged
    out, a Colab link)."""
    nb = nbformat.read(path, as_version=4)
    name, summary = title_and_summary(nb, path.stem)
    relative = path.relative_to(tree).as_posix()
    execute(nb, path.parent, timeout, relative)
    colab = course.settings().colab_url(relative)
    source = f"lecture-{path.stem}.ipynb"
    nbformat.write(with_description(with_colab_link(hide_plumbing(nb), colab), summary),
                   stage / source)
    return Page(source, name, summary, colab)


def assignment_page(path: Path, tree: Path, course: Course, stage: Path) -> Page:
    """Stage a student notebook's prose (its markdown cells, never a code cell) for Sphinx."""
    nb = nbformat.read(path, as_version=4)
    name, summary = title_and_summary(nb, path.stem)
    colab = course.settings().colab_url(path.relative_to(tree).as_posix())
    prose = nbformat.v4.new_notebook(metadata={k: v for k, v in nb.metadata.items()
                                               if k in ("kernelspec", "language_info")},
                                     cells=[c for c in nb.cells if c.cell_type == "markdown"])
    source = f"assignment-{path.stem}.ipynb"
    nbformat.write(with_description(with_colab_link(prose, colab), summary), stage / source)
    return Page(source, name, summary, colab)


def front_matter(summary: str) -> str:
    """MyST front matter giving a markdown page its <meta name="description">."""
    if not summary:
        return ""
    return "---\n" + yaml.safe_dump({"myst": {"html_meta": {"description": summary}}}) + "---\n"


def _cell(text: str) -> str:
    """`text` as the content of a markdown table cell."""
    return " ".join(text.split()).replace("|", "\\|")


def index_page(course: Course, lectures: list[Page], assignments: list[Page]) -> str:
    """The site's home page (MyST markdown): the tables of pages and the toctrees."""
    meta = project_metadata(course.settings_root)
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(str(TEMPLATES)), autoescape=False,
                             keep_trailing_newline=True)
    env.filters["cell"] = _cell
    sections = [
        ("Lectures", "Worked demos following the slides, shown here executed, with their plots.",
         "notebook", lectures),
        ("Assignments", "What each assignment teaches; the exercises themselves are in the "
         "notebook.", "assignment", assignments),
    ]
    return front_matter(meta["description"]) + env.get_template(INDEX_TEMPLATE).render(
        title=TITLE, description=meta["description"],
        repository_url=course.settings().repository_url,
        sections=sections, built=f"from version {meta['version']}")


def sphinx_build(course: Course, stage: Path, out: Path, doctrees: Path, progress) -> None:
    """Sphinx's HTML build of the staged sources into `out`; its warnings go to `progress`."""
    from sphinx.application import Sphinx
    from sphinx.errors import SphinxError
    from sphinx.util.console import nocolor

    nocolor()  # its messages go to a file or a pipe: no terminal colours

    settings = course.settings()
    warnings = io.StringIO()
    try:
        app = Sphinx(str(stage), None, str(out), str(doctrees), "html",
                     confoverrides=sphinx_config(
                         TITLE, f"https://github.com/{settings.student_repository}",
                         settings.branch),
                     status=None, warning=warnings, freshenv=True)
        app.build()
    except SphinxError as error:
        raise SiteError(f"sphinx: {error}") from None
    for line in warnings.getvalue().splitlines():
        progress(f"  sphinx: {line}")
    if app.statuscode:
        raise SiteError("sphinx failed: see its messages above")


def build_site(course: Course, out: Path, lectures: list[str] | None = None,
               assignments: list[str] | None = None, timeout: int = CELL_TIMEOUT,
               progress=print, now: datetime | None = None, published: Path | None = None) -> Path:
    """Build the site of the student tree at `now` (default: now) into `out` (replaced whole on
    success); returns `out`. published: the student repository's clone, whose earlier publishes
    stay on the site as they stay there.

    lectures: stems of the lecture notebooks (default: all); assignments: names, each released
    (default: all the tree holds).
    """
    now = now or datetime.now(timezone.utc)
    out = Path(out).resolve()
    out.parent.mkdir(parents=True, exist_ok=True)
    (course.build_dir / "work").mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="site-", dir=course.build_dir / "work") as tree_tmp, \
            tempfile.TemporaryDirectory(prefix=".site-", dir=out.parent) as tmp:
        tree = Path(tree_tmp) / "student"
        tree.mkdir()
        progress(f"  the student tree at {now.isoformat()} (what publish would write)")
        try:
            shown, _ = stage_tree(course, tree, published, None, now)
        except (PublishError, SettingsError) as error:
            raise SiteError(f"the student tree cannot be made: {error}") from None
        lecture_paths = sorted((tree / LECTURES_DIR).glob("*.ipynb"))
        if lectures is not None:
            known = {p.stem: p for p in lecture_paths}
            missing = [n for n in lectures if n not in known]
            if missing:
                raise SiteError(f"no lecture notebook {', '.join(missing)} in {course.root / LECTURES_DIR} "
                                f"(found: {', '.join(known) or 'none'})")
            lecture_paths = [known[n] for n in lectures]
        names = shown
        if assignments is not None:
            early = [a for a in course.select(assignments) if a not in shown]
            if early:
                raise SiteError(f"{', '.join(early)}: not released at {now.isoformat()}, so not on "
                                "the site ([tool.course.release]; --now reads the calendar at another time)")
            names = course.select(assignments)
        release_paths = [tree / "release" / a / f"{a}.ipynb" for a in names]
        stage = Path(tmp) / "source"
        stage.mkdir()
        lecture_pages = []
        for path in lecture_paths:
            progress(f"  executing {path.relative_to(tree)}")
            lecture_pages.append(lecture_page(path, tree, course, stage, timeout))
        assignment_pages = [assignment_page(p, tree, course, stage) for p in release_paths]
        (stage / "index.md").write_text(index_page(course, lecture_pages, assignment_pages),
                                        encoding="utf-8")
        progress("  building the pages (Sphinx)")
        sphinx_build(course, stage, Path(tmp) / "site", Path(tmp) / "doctrees", progress)
        if out.exists():
            shutil.rmtree(out)
        (Path(tmp) / "site").rename(out)
    return out


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--out", type=Path, default=None, help="output folder (default: build/site)")
    parser.add_argument("--lecture", action="append", default=None, metavar="NAME",
                        help="only this lecture notebook (its stem; repeatable; default: all)")
    parser.add_argument("--assignment", "-a", action="append", default=None, metavar="ASSIGNMENT",
                        help="only this assignment, released by then (repeatable; default: all released)")
    parser.add_argument("--timeout", type=int, default=CELL_TIMEOUT,
                        help=f"seconds per lecture cell (default {CELL_TIMEOUT})")
    parser.add_argument("--now", type=iso_time, default=None, metavar="TIME",
                        help="read the calendar at this ISO 8601 time with its UTC offset (default: "
                             "now): the site shows what `publish` would publish then")
    parser.add_argument("--published", type=Path, default=None, metavar="OUT",
                        help="the student repository's clone: assignments an earlier publish put "
                             "there stay on the site, as they stay there")


def run(args: argparse.Namespace, course: Course) -> int:
    out = args.out or course.build_dir / "site"
    try:
        site = build_site(course, out, args.lecture, args.assignment, args.timeout,
                          progress=lambda line: print(line, file=sys.stderr, flush=True),
                          now=args.now, published=args.published)
    except SiteError as error:
        print(f"site: {error}; nothing was written", file=sys.stderr)
        return 1
    pages = sorted(p.name for p in site.glob("*.html"))
    print(f"Built {site}: {len(pages)} pages; open {site / 'index.html'}")
    return 0
