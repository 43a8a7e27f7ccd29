"""Feedback pages are made within stated limits, in a child process (issue 37, finding 10).

The attacks, as a student hands them in: 300k `$x$` formulas (MathML is about 24 times the TeX;
before, 88 CPU-s and 1.5 GiB in the grader's own process, a 29 MB page) and 20 MB of markdown
(before, 108 CPU-s, 2.3 GiB, a 37 MB page). The page is made by a child of the page server, whose
CPU time and peak memory the kernel reports (wait4); the grader's own process does none of the
work. A page that cannot be made within the limits is a short page saying so, with the scores.
"""

from __future__ import annotations

import os
import resource

import nbformat
import pytest

from autograder.course.notebooks import grade_id, read_notebook
from autograder.engine import feedback_html
from autograder.engine.feedback_html import (
    CELL_LIMIT,
    FORMULA_LIMIT,
    GRADED_TEXT,
    NOTEBOOK_TEXT_LIMIT,
    PAGE_BYTES_LIMIT,
    TEXT_LIMIT,
    cap_notebook,
)
from autograder.engine.page_server import LIMITS, Limits, PageServer
from autograder.engine.template import build_template

A = "00_fixture"
SCORES = {"test_scale": 1.0, "test_scale_hidden": 2.0, "test_mean_square": 0.0, "test_mean_square_hidden": 0.0}


@pytest.fixture(scope="module")
def made(released_course, tmp_path_factory):
    """make(cells, limits) -> (PageRun, page text): the fixture's solution with `cells` added,
    made into a page by one page server, as grade and feedback make it."""
    work = tmp_path_factory.mktemp("pages")
    template = build_template(released_course.source_dir, [A], work / "template")
    source = released_course.source_notebook(A)
    with PageServer() as server:
        def make(cells, limits=LIMITS, name="page"):
            nb = read_notebook(source)
            nb.cells += cells
            nbformat.write(nb, work / f"{name}.ipynb")
            run = server.make(template.dir, A, "mallory", work / f"{name}.ipynb", SCORES,
                              work / f"{name}.html", source, limits)
            return run, (work / f"{name}.html").read_text(encoding="utf-8")
        yield make


def own_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def within_limits(run, page: str) -> None:
    """The page was made by a child, within every limit, and the grader did none of the work."""
    assert run.made and run.short == ""
    assert run.pid != os.getpid()
    assert 0 < run.cpu_seconds < LIMITS.cpu_seconds
    assert 0 < run.max_rss_bytes < LIMITS.memory_bytes
    assert run.page_bytes == len(page.encode("utf-8")) <= PAGE_BYTES_LIMIT


@pytest.mark.slow
def test_300k_formulas_make_a_bounded_page_in_a_limited_child(made):
    before = own_cpu()
    run, page = made([nbformat.v4.new_markdown_cell("$x$ " * 1_000) for _ in range(300)], name="formulas")
    assert own_cpu() - before < 2  # before: 88 CPU-s here, in this process
    within_limits(run, page)
    assert page.count("<math") == FORMULA_LIMIT  # the rest stay as their TeX text
    assert page.count("$x$") > 10_000
    assert "scale multiplies every element by the factor." in page  # the checks are all there


@pytest.mark.slow
def test_20mb_of_markdown_make_a_bounded_page_in_a_limited_child(made):
    line = "Some **bold** words and a [link](https://example.org) in a line.\n\n"
    before = own_cpu()
    run, page = made([nbformat.v4.new_markdown_cell(line * 150) for _ in range(2_000)], name="markdown")
    assert own_cpu() - before < 2  # before: 108 CPU-s here, in this process
    within_limits(run, page)
    assert run.page_bytes < 4 << 20  # before: 37 MB
    assert "more characters]" in page and "more cells are not shown" in page
    assert "Hidden: mean_square on negative numbers and zeros." in page


CODE = "x = [1, 2, 3]  # a comment\n" * 400  # 30 cells: 300k characters, about 13 CPU-s to render


@pytest.mark.slow
@pytest.mark.parametrize("cells, limits, why", [
    (30, Limits(cpu_seconds=1), "making it took more than 1 CPU seconds"),
    (30, Limits(wall_seconds=1), "making it took longer than 1 seconds"),
    (0, Limits(memory_bytes=64 << 20), "it needed more than 64 MiB of memory"),
    (0, Limits(page_bytes=10_000), "more than the 10,000 a feedback page may be"),
])
def test_past_a_limit_the_student_gets_a_short_page_with_the_grade(made, cells, limits, why):
    """Each limit holds in the child: rendering 300k characters of code past one CPU second or one
    second of wall, the solution's page past 64 MiB of memory or 10 kB of page."""
    run, page = made([nbformat.v4.new_code_cell(CODE) for _ in range(cells)], limits, name="limited")
    assert not run.made and why in run.short and run.page_bytes == len(page.encode("utf-8")) < 2_000
    assert run.cpu_seconds < min(limits.cpu_seconds, limits.wall_seconds) + 5
    assert "could not be made: " in page and why in page and "Your grade is not affected: 3 / 6" in page
    assert "<td>Hidden: scale keeps the sign of a negative factor and works on 2-D arrays.</td><td>2 / 2</td>" in page


def test_the_notebook_is_cut_before_it_is_rendered(fixture_course):
    nb = read_notebook(fixture_course.source_notebook(A))
    graded = len(nb.cells)
    nb.cells += [nbformat.v4.new_markdown_cell("m" * (TEXT_LIMIT + 5)) for _ in range(4)]
    nb.cells += [nbformat.v4.new_markdown_cell("x") for _ in range(CELL_LIMIT + 10)]
    test = next(c for c in nb.cells if grade_id(c) == "test_mean_square_hidden")
    nb.cells.remove(test)
    test.outputs = [nbformat.v4.new_output("error", ename="CheckFailed", evalue="e" * 50_000, traceback=["t"])]
    nb.cells.append(test)  # a graded cell after the budget is spent
    cut = cap_notebook(nb)
    texts = [c.source for c in nb.cells[graded - 1:]]
    assert len(texts[0]) < TEXT_LIMIT + 100 and texts[0].endswith("[... cut: 5 more characters]")
    assert sum(len(c.source) for c in nb.cells) < NOTEBOOK_TEXT_LIMIT + GRADED_TEXT * graded + 10_000
    assert len(nb.cells) == graded + CELL_LIMIT + 1 and "14 more cells are not shown" in nb.cells[-1].source
    kept = next(c for c in nb.cells if grade_id(c) == "test_mean_square_hidden")
    assert 1_000 < len(kept.outputs[0].evalue) < GRADED_TEXT + 100  # the check's message, cut
    assert any(line.startswith("characters cut") for line in cut) and "cells left out: 14" in cut


def test_only_the_first_formulas_become_mathml_and_finishing_twice_draws_no_more():
    html = "<html><body><p>" + "$x$ " * (FORMULA_LIMIT + 50) + "</p></body></html>"
    once = feedback_html.finish_html(html, {})
    assert once.count("<math") == FORMULA_LIMIT and once.count("$x$") == 50
    assert feedback_html.finish_html(once, {}).count("<math") == FORMULA_LIMIT
