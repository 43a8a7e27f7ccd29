"""The course website: built offline from a small course, self-contained, and it renders; it shows
what `publish` would publish at that moment, and nothing of the instructor's side."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from urllib.parse import urlsplit

import nbformat
import numpy as np
import pytest

from autograder.authoring.readme import render_readme
from autograder.authoring.setup_cell import apply_setup_cell, render_head
from autograder.authoring.site import TITLE, SiteError, build_site
from autograder.course.settings import REPO_ROOT, course_settings
from autograder.course.term import course_term
from tests.conftest import copy_fixture_course

PLOT_RGB = (214, 39, 40)  # the red the fixture lecture fills its plot with (#d62728)
CHROMIUM_NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")


# -- a small course -----------------------------------------------------------------------------

# The lecture's first paragraph: longer than a summary (240 characters), so the index and the
# page's description must stop at the end of a sentence.
FIRST_PARAGRAPH = ("This lecture fills an area with red so that a test can find it on the page. "
                   "The plot is drawn by matplotlib in the lecture's kernel and embedded as an "
                   "image file. Nothing else is drawn, and the axes carry no labels at all. "
                   "A fourth sentence makes the paragraph longer than any summary may be.")
SEARCH_WORD = "quokka"  # in the lecture's prose only: the search index must find it there
SETUP_WORD = "zanzibar"  # in the lecture's setup cell only: on no page, in no index
# What the fixture's source (copied as its release) holds that no student may see before grading.
SECRETS = ("BEGIN SOLUTION", "BEGIN HIDDEN TESTS", "return x * factor",
           "np.mean(np.asarray(x, dtype=float) ** 2)", "the square of a negative number")
PAGES = ["index.html", "lecture-01_plot.html", "assignment-00_fixture.html"]
TITLES = [TITLE, "A plotted lecture", "Fixture assignment"]
# The small course's calendar: 00_fixture is out, 01_later (a copy of it) opens next week.
CALENDAR = """
[tool.course.release]
"00_fixture" = "2026-11-24T09:00:00+00:00"
"01_later" = "2026-12-02T09:00:00+00:00"
"""
BUILT_AT = "2026-11-25T12:00:00+00:00"  # 01_later is not released yet
LATER = "2026-12-03T12:00:00+00:00"


def _lecture(cells: list[str]) -> nbformat.NotebookNode:
    return nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_markdown_cell(f"# A plotted lecture\n\n{FIRST_PARAGRAPH}"),
        nbformat.v4.new_markdown_cell(f"The red area is $y = x W_1$ for every $x$, as a "
                                      f"{SEARCH_WORD} would see it."),
        *[nbformat.v4.new_code_cell(source) for source in cells]])


# The small course's own student repository: its links, never this checkout's.
THEIR_REPOSITORY = "another-school/their-course"


def _small_course(folder: Path):
    """The fixture course with a second assignment released later (CALENDAR), one lecture that
    draws a plot, an instructor's guide, and a pyproject.toml, README.md and LICENSE of its own
    naming another student repository: a course `publish` accepts."""
    course = copy_fixture_course(folder / "course")
    ours = (REPO_ROOT / "pyproject.toml").read_text(encoding="utf-8")
    theirs = ours.replace(f'student_repository = "{course_settings(REPO_ROOT).student_repository}"',
                          f'student_repository = "{THEIR_REPOSITORY}"')
    assert theirs != ours
    # This course's calendar names this course's assignments: the small course has its own.
    theirs = theirs[:theirs.index("\n[tool.course.due]")] + "\n" + CALENDAR
    (course.root / "pyproject.toml").write_text(theirs, encoding="utf-8")
    for name in ("README.md", "LICENSE"):
        shutil.copyfile(REPO_ROOT / name, course.root / name)
    (course.source_dir / "01_later").mkdir()
    shutil.copyfile(course.source_notebook("00_fixture"), course.source_notebook("01_later"))
    (course.root / "docs").mkdir()
    (course.root / "docs" / "instructors.md").write_text(
        "# The instructor's guide\n\nWhat an instructor runs in a term. See [design](design.md) "
        "and [the calendar](#a-terms-calendar).\n\n## A term's calendar\n\nDates.\n")
    (course.root / "notebooks").mkdir()
    settings = course_settings(course.root)
    lecture = _lecture([
        # The setup cell, as configure writes it; what follows its anchor is the lecture's.
        f"device = helpers.setup()\nprint('{SETUP_WORD}')",
        "%matplotlib inline\nimport matplotlib.pyplot as plt",
        "fig, ax = plt.subplots(figsize=(6, 3))\n"
        "ax.fill_between([0, 1], [0, 0], [1, 1], color='#d62728')\nplt.show()",
    ])
    for nb, path in ((lecture, course.root / "notebooks" / "01_plot.ipynb"),
                     *((nbformat.read(course.source_notebook(a), 4), course.source_notebook(a))
                       for a in course.assignments())):
        apply_setup_cell(nb, render_head(settings))
        nbformat.write(nb, path)
    readme = course.root / "README.md"
    readme.write_text(render_readme(readme.read_text(), course, settings))
    return course


@pytest.fixture
def small_course(tmp_path):
    return _small_course(tmp_path)


def _offline_prefix() -> list[str] | None:
    """A command prefix that runs without a network (a new network namespace, loopback only);
    None where the machine cannot cut it."""
    if not (shutil.which("unshare") and shutil.which("ip")):
        return None
    if subprocess.run(["unshare", "-rn", "true"], capture_output=True).returncode != 0:
        return None
    # Kernels talk to nbclient over TCP on 127.0.0.1: bring the namespace's loopback up.
    return ["unshare", "-rn", "sh", "-c", 'ip link set lo up && exec "$@"', "sh"]


@dataclass(frozen=True)
class Built:
    site: Path
    log: str  # what the command wrote on stderr
    offline: bool  # built with the network cut


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Built:
    """The small course's site, built once by the instructor's command (with the network cut
    where the machine allows it) for every test that reads it."""
    folder = tmp_path_factory.mktemp("site")
    course, out, prefix = _small_course(folder), folder / "site", _offline_prefix()
    done = subprocess.run([*(prefix or []), sys.executable, "-m", "autograder", "--root",
                           str(course.root), "site", "--out", str(out), "--now", BUILT_AT],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr[-3000:]
    return Built(out, done.stderr, prefix is not None)


def _soup(site: Path, page: str):
    from bs4 import BeautifulSoup

    return BeautifulSoup((site / page).read_text(encoding="utf-8"), "html.parser")


def _text(element) -> str:
    """An element's words as a reader sees them (Sphinx's typographic apostrophes made plain)."""
    return " ".join(element.get_text().replace("\u2019", "'").split())


@pytest.mark.slow
def test_the_site_is_built_without_a_warning(built):
    assert "sphinx:" not in built.log, built.log  # each of Sphinx's warnings is such a line
    assert {*PAGES, "search.html", "searchindex.js"} <= {p.name for p in built.site.iterdir()}


@pytest.mark.slow
def test_every_page_has_a_sidebar_of_every_page_with_its_own_marked(built):
    for page, title in zip(PAGES, TITLES):
        soup = _soup(built.site, page)
        sidebar = soup.select("nav.bd-docs-nav a.reference")
        assert [_text(a) for a in sidebar] == TITLES[1:], page  # the home page: the site's title
        assert [a["href"] for a in sidebar if _text(a) != title] == [
            p for p in PAGES[1:] if p != page]
        assert [_text(a) for a in soup.select("nav.bd-docs-nav li.current > a")] == (
            [title] if page != "index.html" else [])
        assert soup.select_one("a.navbar-brand")["href"] == "index.html" or page == "index.html"
        assert [_text(c) for c in soup.select("nav.bd-docs-nav p.caption")] == [
            "Lectures", "Assignments"]


@pytest.mark.slow
def test_previous_and_next_walk_the_pages_in_the_sidebar_order(built):
    for at, page in enumerate(PAGES):
        soup = _soup(built.site, page)
        for selector, neighbour in (("a.left-prev", at - 1), ("a.right-next", at + 1)):
            link = soup.select_one(selector)
            expected = PAGES[neighbour] if 0 <= neighbour < len(PAGES) else None
            assert (link and link["href"]) == expected, f"{page}: {selector}"
            if link:
                assert TITLES[neighbour] in _text(link)


def _search_index(site: Path) -> dict:
    """Sphinx's search index (searchindex.js: `Search.setIndex({...})`)."""
    text = (site / "searchindex.js").read_text(encoding="utf-8")
    return json.loads(text[text.index("(") + 1:text.rindex(")")])


def _stem(word: str) -> str:
    from sphinx.search.en import SearchEnglish

    return SearchEnglish({}).stem(word)


@pytest.mark.slow
def test_the_search_index_holds_the_lecture_words_and_every_page_searches(built):
    index = _search_index(built.site)
    documents = index["terms"].get(_stem(SEARCH_WORD))
    documents = documents if isinstance(documents, list) else [documents]
    assert [index["docnames"][d] for d in documents] == ["lecture-01_plot"]
    assert _stem(SETUP_WORD) not in index["terms"]  # the setup cell is not indexed either
    for page in PAGES:
        assert _soup(built.site, page).select_one('form[action="search.html"]'), page
    assert (built.site / "_static" / "searchtools.js").is_file()


@pytest.mark.slow
def test_the_setup_cell_is_on_no_page_while_the_lecture_code_is(built):
    lecture = (built.site / "lecture-01_plot.html").read_text(encoding="utf-8")
    assert "fill_between" in lecture  # the lecture's own cells are shown
    for path in built.site.rglob("*"):
        if path.is_file() and path.suffix in (".html", ".js", ".txt", ".ipynb"):
            text = path.read_text(encoding="utf-8", errors="replace")
            assert SETUP_WORD not in text and "helpers.setup()" not in text, path


@pytest.mark.slow
def test_no_solution_or_hidden_test_reaches_the_site(built):
    """The fixture's release is its source: solutions and hidden tests in code cells."""
    assert "A two-exercise notebook" in (built.site / "assignment-00_fixture.html").read_text()
    for path in built.site.rglob("*"):
        if path.is_file():
            text = path.read_text(encoding="utf-8", errors="replace")
            assert not [s for s in SECRETS if s in text], path
    assert not list(built.site.rglob("*.ipynb"))  # no page's source is copied


@pytest.mark.slow
def test_each_summary_is_the_first_paragraph_cut_at_a_sentence_end(built):
    """The index's line for a page and the page's description are its first paragraph's first
    sentences, whole."""
    index = _soup(built.site, "index.html")
    rows = {a["href"]: row for row in index.select("article table tr")
            for a in row.select("a[href]")}
    for page in PAGES[1:]:
        soup = _soup(built.site, page)
        paragraph = next(_text(p) for p in soup.select("article section p")
                         if not p.select_one('a[href^="https://colab"]'))
        summary = _text(rows[page].select("td")[1])
        description = soup.select_one('meta[name="description"]')["content"]
        assert summary == description.replace("\u2019", "'") and summary.endswith("."), page
        assert paragraph.startswith(summary), page
        rest = paragraph[len(summary):]
        assert rest == "" or (rest[0] == " " and rest[1].isupper()), page
    lecture = _text(rows["lecture-01_plot.html"].select("td")[1])
    assert 0 < len(lecture) <= 240 < len(FIRST_PARAGRAPH)


@pytest.mark.slow
def test_pages_load_only_files_of_the_site_and_render_math_as_mathml(built):
    for page in [*PAGES, "search.html"]:
        soup = _soup(built.site, page)
        for tag, attribute in (("script", "src"), ("link", "href"), ("img", "src")):
            for element in soup.find_all(tag, **{attribute: True}):
                if tag == "link" and element.get("rel") not in (["stylesheet"], ["preload"]):
                    continue  # next, prev, index, search: pages, not resources
                target = urlsplit(element[attribute])
                assert not target.scheme and not target.netloc, f"{page}: {element[attribute]}"
                assert (built.site / target.path).is_file(), f"{page}: {target.path}"
    lecture = _soup(built.site, "lecture-01_plot.html")
    image = lecture.select_one("article img")
    assert (built.site / image["src"]).read_bytes().startswith(b"\x89PNG")  # the executed plot
    text = str(lecture)
    assert "<math" in text and "$y = x" not in text
    assert "<msub><mi>W</mi><mn>1</mn></msub>" in text  # MathML whole, not torn into empty tags


@pytest.mark.slow
def test_notebook_pages_link_to_colab_of_the_courses_own_repository(built):
    for page, notebook in (("lecture-01_plot.html", "notebooks/01_plot.ipynb"),
                           ("assignment-00_fixture.html", "release/00_fixture/00_fixture.ipynb")):
        links = [a["href"] for a in _soup(built.site, page).select("article a[href]")]
        colab = [u for u in links if u.startswith("https://colab.research.google.com/github/")]
        assert len(colab) == 1 and colab[0].endswith(notebook), page
        assert colab[0].startswith(f"https://colab.research.google.com/github/{THEIR_REPOSITORY}/"), colab
        title = _soup(built.site, page).select_one("article h1")
        assert title.find_next("p").a["href"] == colab[0]  # the paragraph under the title
    index = [a["href"] for a in _soup(built.site, "index.html").select("a[href]")]
    assert f"https://github.com/{THEIR_REPOSITORY}" in index
    assert not [u for u in index if course_settings(REPO_ROOT).student_repository in u]


@pytest.mark.slow
def test_the_site_holds_what_publish_would_publish_then_and_nothing_of_the_instructors(built):
    """issue 39, 5: gh-pages held assignments before their release dates, and instructors.html."""
    names = {p.relative_to(built.site).as_posix() for p in built.site.rglob("*") if p.is_file()}
    assert not [n for n in names if "01_later" in n or "instructor" in n], sorted(names)
    for path in built.site.rglob("*"):
        if path.is_file() and path.suffix in (".html", ".js", ".txt"):
            text = path.read_text(encoding="utf-8", errors="replace")
            assert "01_later" not in text and "instructor's guide" not in text.lower(), path


@pytest.mark.slow
def test_a_later_site_shows_an_assignment_once_its_release_time_has_come(small_course, tmp_path):
    term = course_term(small_course.root, small_course.assignments())
    assert not term.released("01_later", datetime.fromisoformat(BUILT_AT))
    with pytest.raises(SiteError, match="01_later: not released at 2026-11-25"):
        build_site(small_course, tmp_path / "early", lectures=[], assignments=["01_later"],
                   progress=lambda _: None, now=datetime.fromisoformat(BUILT_AT))
    site = build_site(small_course, tmp_path / "site", lectures=[], progress=lambda _: None,
                      now=datetime.fromisoformat(LATER))
    assert {"assignment-00_fixture.html", "assignment-01_later.html"} <= {p.name for p in site.iterdir()}


@pytest.mark.slow
def test_a_lecture_that_raises_names_itself_and_leaves_the_old_site(small_course, tmp_path):
    out = tmp_path / "site"
    out.mkdir()
    (out / "index.html").write_text("the previous site")
    broken = _lecture(["device = helpers.setup()", "raise ValueError('broken demo')"])
    apply_setup_cell(broken, render_head(course_settings(small_course.root)))
    nbformat.write(broken, small_course.root / "notebooks" / "01_plot.ipynb")
    with pytest.raises(SiteError, match="01_plot.ipynb.*broken demo"):
        build_site(small_course, out, progress=lambda _: None, now=datetime.fromisoformat(BUILT_AT))
    assert (out / "index.html").read_text() == "the previous site"


@pytest.mark.slow
def test_the_site_builds_with_the_network_cut(built):
    if not built.offline:
        pytest.skip("this machine cannot cut the network (unshare -rn and ip needed)")
    assert (built.site / "lecture-01_plot.html").is_file()


def test_unknown_lecture_is_refused_by_name(small_course, tmp_path):
    with pytest.raises(SiteError, match="no lecture notebook 99_nothing"):
        build_site(small_course, tmp_path / "site", lectures=["99_nothing"],
                   now=datetime.fromisoformat(BUILT_AT))


# -- it renders ----------------------------------------------------------------------------------

def _chromium() -> str:
    for name in CHROMIUM_NAMES:
        if shutil.which(name):
            return shutil.which(name)
    pytest.skip(f"no headless Chromium on PATH (looked for {', '.join(CHROMIUM_NAMES)}); "
                "install the Debian package `chromium` to run this test")


@pytest.mark.slow
def test_a_lecture_page_renders_with_its_plot(built, tmp_path):
    import matplotlib.image

    chromium = _chromium()
    site = built.site
    shot = tmp_path / "lecture.png"
    subprocess.run([chromium, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                    f"--user-data-dir={tmp_path / 'profile'}", "--window-size=1000,1400",
                    f"--screenshot={shot}", (site / "lecture-01_plot.html").as_uri()],
                   check=True, capture_output=True, timeout=120)
    pixels = np.asarray(matplotlib.image.imread(shot))[..., :3]  # (H, W, 3) floats in [0, 1]
    assert pixels.shape[0] >= 1000 and pixels.std() > 0.05, "the page rendered blank"
    red = np.all(np.abs(pixels * 255 - np.array(PLOT_RGB)) < 12, axis=-1)
    assert red.sum() > 10_000, f"the plot's red covers {red.sum()} pixels; expected the filled area"


@pytest.mark.slow
def test_the_search_page_finds_the_lecture_in_a_browser_offline(built, tmp_path):
    """Sphinx's search runs in the page from searchindex.js: no server, no network."""
    chromium = _chromium()
    query = (built.site / "search.html").as_uri() + f"?q={SEARCH_WORD}"
    done = subprocess.run([*(_offline_prefix() or []), chromium, "--headless", "--no-sandbox",
                           "--disable-gpu", f"--user-data-dir={tmp_path / 'profile'}",
                           "--virtual-time-budget=10000", "--dump-dom", query],
                          check=True, capture_output=True, text=True, timeout=120)
    from bs4 import BeautifulSoup

    found = BeautifulSoup(done.stdout, "html.parser").select("ul.search li a")
    assert [(a["href"].split("?")[0], _text(a)) for a in found] == [
        ("lecture-01_plot.html", "A plotted lecture")], done.stdout[-2000:]
