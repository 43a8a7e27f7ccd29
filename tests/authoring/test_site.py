"""The course website: built offline from a small course, self-contained, and it renders."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import numpy as np
import pytest

from autograder.authoring.site import SiteError, build_site, math_to_mathml, title_and_summary
from tests.conftest import copy_fixture_course

PLOT_RGB = (214, 39, 40)  # the red the fixture lecture fills its plot with (#d62728)
CHROMIUM_NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")


# -- markdown -----------------------------------------------------------------------------------

def test_math_becomes_mathml_outside_code_only():
    text = math_to_mathml("Loss $L = \\sum_i (y_i - \\hat y_i)^2$ costs \\$5; `$x$` stays.\n\n"
                          "$$\\frac{\\partial L}{\\partial w_1}$$")
    assert text.count("<math") == 2 and 'display="block"' in text and "<mfrac>" in text
    assert "`$x$`" in text and "\\$5" in text


def test_title_and_summary_are_the_first_heading_and_paragraph():
    nb = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_code_cell("x = 1"),
        nbformat.v4.new_markdown_cell("# Computation graphs\n\nEvery **tensor** op adds a `grad_fn` node.")])
    assert title_and_summary(nb, "fallback") == ("Computation graphs",
                                                 "Every tensor op adds a grad_fn node.")
    assert title_and_summary(nbformat.v4.new_notebook(), "fallback") == ("fallback", "")


def test_a_summary_is_whole_sentences_never_one_cut_in_the_middle():
    """The index cut each page's first paragraph at 237 characters, mid-sentence."""
    first = "Training a network is mostly multiplying matrices, " + "fast and slow " * 6 + "alike."
    second = "This notebook asks how fast a machine can do that, on paper and with a stopwatch."
    third = "Then it measures " + "one more thing " * 8 + "at the end."
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell(
        f"# Hardware\n\n{first} {second} {third}")])
    _, summary = title_and_summary(nb, "x")
    assert summary == f"{first} {second}" and len(summary) <= 240
    long = "A sentence that goes on " + "and on " * 50 + "until it ends."
    nb.cells[0].source = f"# Long\n\n{long} Short one."
    assert title_and_summary(nb, "x")[1] == long  # the first sentence whole, however long


# -- a small course -----------------------------------------------------------------------------

def _lecture(cells: list[str]) -> nbformat.NotebookNode:
    return nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_markdown_cell("# A plotted lecture\n\nThe red area is $y = x W_1$ for every $x$."),
        *[nbformat.v4.new_code_cell(source) for source in cells]])


def _small_course(folder: Path):
    """The fixture course with its source as the release, and one lecture that draws a plot."""
    course = copy_fixture_course(folder / "course")
    (course.release_dir / "00_fixture").mkdir(parents=True)
    shutil.copyfile(course.source_notebook("00_fixture"), course.release_notebook("00_fixture"))
    (course.root / "docs").mkdir()
    (course.root / "docs" / "instructors.md").write_text(
        "# The instructor's guide\n\nWhat an instructor runs in a term. See [design](design.md) "
        "and [the calendar](#a-terms-calendar).\n\n## A term's calendar\n\nDates.\n")
    (course.root / "notebooks").mkdir()
    nbformat.write(_lecture([
        "# Setup (read-only)\nimport helpers\n\ndevice = helpers.setup()\nprint('PLUMBING-MARKER')",
        "%matplotlib inline\nimport matplotlib.pyplot as plt",
        "fig, ax = plt.subplots(figsize=(6, 3))\n"
        "ax.fill_between([0, 1], [0, 0], [1, 1], color='#d62728')\nplt.show()",
    ]), course.root / "notebooks" / "01_plot.ipynb")
    return course


@pytest.fixture
def small_course(tmp_path):
    return _small_course(tmp_path)


@pytest.fixture(scope="module")
def built_site(tmp_path_factory) -> Path:
    """The small course's site, built once for the tests that only read it."""
    folder = tmp_path_factory.mktemp("site")
    return build_site(_small_course(folder), folder / "site", progress=lambda _: None)


@pytest.mark.slow
def test_the_site_builds_into_self_contained_pages(built_site):
    site = built_site
    pages = sorted(p.name for p in site.glob("*.html"))
    assert pages == ["assignment-00_fixture.html", "index.html", "instructors.html",
                     "lecture-01_plot.html"]
    lecture = (site / "lecture-01_plot.html").read_text()
    assert 'src="data:image/png;base64,' in lecture  # the executed plot, embedded
    assert "<math" in lecture and "$y = x" not in lecture
    assert "<msub><mi>W</mi><mn>1</mn></msub>" in lecture  # MathML whole, not torn into empty tags
    assert "PLUMBING-MARKER" not in lecture and "helpers.setup()" not in lecture  # setup cell: out
    for page in pages:
        text = (site / page).read_text()
        assert "<script" not in text, f"{page} loads a script"
        assert 'rel="stylesheet"' not in text, f"{page} links a stylesheet"
    index = (site / "index.html").read_text()
    assert 'href="lecture-01_plot.html"' in index and 'href="assignment-00_fixture.html"' in index
    assert "A plotted lecture" in index
    assignment = (site / "assignment-00_fixture.html").read_text()
    assert "colab.research.google.com" in assignment
    # Navigation between pages: a sidebar of every page, previous and next.
    from bs4 import BeautifulSoup

    def links(text: str) -> dict:
        soup = BeautifulSoup(text, "html.parser")
        sidebar = soup.select("nav.course-nav li")
        return {"sidebar": [li.get_text(strip=True) for li in sidebar],
                "current": soup.select_one('nav.course-nav [aria-current="page"]').get_text(),
                **{rel: (a["href"], a.get_text(strip=True)) for rel in ("prev", "next")
                   for a in soup.select(f'nav.course-pager a[rel="{rel}"]')}}

    sidebar = ["A plotted lecture", "Fixture assignment", "The instructor's guide"]
    assert links(lecture) == {"sidebar": sidebar, "current": "A plotted lecture",
                              "next": ("assignment-00_fixture.html", "Fixture assignment \u2192")}
    assert links(assignment) == {"sidebar": sidebar, "current": "Fixture assignment",
                                 "prev": ("lecture-01_plot.html", "\u2190 A plotted lecture"),
                                 "next": ("instructors.html", "The instructor's guide \u2192")}
    # The instructor's guide is on the site; links into the private repository are plain text.
    guide = (site / "instructors.html").read_text()
    assert links(guide)["current"] == "The instructor's guide"
    assert "design.md" not in guide and 'href="#a-terms-calendar"' in guide
    assert 'href="instructors.html"' in index
    assert "BEGIN SOLUTION" not in assignment  # prose only: no code cell reaches the page


@pytest.mark.slow
def test_a_lecture_that_raises_names_itself_and_leaves_the_old_site(small_course, tmp_path):
    out = tmp_path / "site"
    out.mkdir()
    (out / "index.html").write_text("the previous site")
    nbformat.write(_lecture(["raise ValueError('broken demo')"]),
                   small_course.root / "notebooks" / "01_plot.ipynb")
    with pytest.raises(SiteError, match="01_plot.ipynb.*broken demo"):
        build_site(small_course, out, progress=lambda _: None)
    assert (out / "index.html").read_text() == "the previous site"


def _offline_command() -> list[str]:
    """A command prefix that runs without a network (a new network namespace, loopback only)."""
    if not (shutil.which("unshare") and shutil.which("ip")):
        pytest.skip("needs unshare and ip (util-linux, iproute2) to cut the network")
    if subprocess.run(["unshare", "-rn", "true"], capture_output=True).returncode != 0:
        pytest.skip("this machine does not allow network namespaces (unshare -rn)")
    # Kernels talk to nbclient over TCP on 127.0.0.1: bring the namespace's loopback up.
    return ["unshare", "-rn", "sh", "-c", 'ip link set lo up && exec "$@"', "sh"]


@pytest.mark.slow
def test_make_site_builds_with_the_network_cut(small_course, tmp_path):
    out = tmp_path / "site"
    done = subprocess.run([*_offline_command(), sys.executable, "-m", "autograder", "--root",
                           str(small_course.root), "site", "--out", str(out)],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr[-3000:]
    assert 'src="data:image/png;base64,' in (out / "lecture-01_plot.html").read_text()


def test_unknown_lecture_is_refused_by_name(small_course, tmp_path):
    with pytest.raises(SiteError, match="no lecture notebook 99_nothing"):
        build_site(small_course, tmp_path / "site", lectures=["99_nothing"])


# -- it renders ----------------------------------------------------------------------------------

def _chromium() -> str:
    for name in CHROMIUM_NAMES:
        if shutil.which(name):
            return shutil.which(name)
    pytest.skip(f"no headless Chromium on PATH (looked for {', '.join(CHROMIUM_NAMES)}); "
                "install the Debian package `chromium` to run this test")


@pytest.mark.slow
def test_a_lecture_page_renders_with_its_plot(built_site, tmp_path):
    import matplotlib.image

    chromium = _chromium()
    site = built_site
    shot = tmp_path / "lecture.png"
    subprocess.run([chromium, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                    f"--user-data-dir={tmp_path / 'profile'}", "--window-size=1000,1400",
                    f"--screenshot={shot}", (site / "lecture-01_plot.html").as_uri()],
                   check=True, capture_output=True, timeout=120)
    pixels = np.asarray(matplotlib.image.imread(shot))[..., :3]  # (H, W, 3) floats in [0, 1]
    assert pixels.shape[0] >= 1000 and pixels.std() > 0.05, "the page rendered blank"
    red = np.all(np.abs(pixels * 255 - np.array(PLOT_RGB)) < 12, axis=-1)
    assert red.sum() > 10_000, f"the plot's red covers {red.sum()} pixels; expected the filled area"
