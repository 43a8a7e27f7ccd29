"""The feedback page a student keeps: rebuilt from an allow-list, its maths drawn without a script, its
cells named by what they check, no internal key or path of the grading machine (the pages of a real
grading run: tests/classroom/test_feedback.py; their limits: tests/engine/test_page_server.py)."""

from __future__ import annotations

import nbformat

from autograder.engine.feedback_html import (
    CELL_LIMIT,
    GRADED_TEXT,
    TEXT_LIMIT,
    cap_notebook,
    finish_html,
    sanitize,
    scrub_text,
)

PICTURE = "data:image/png;base64,iVBORw0KGgo="


def test_nothing_in_a_students_html_runs_loads_or_redirects():
    hostile = ('<p onclick="steal()">hi</p><script>steal()</script><img src="https://evil.example/x.png">'
               f'<img src="{PICTURE}" onerror="steal()"><a href="javascript:steal()">x</a>'
               '<iframe src="https://evil.example"></iframe><form action="https://evil.example"><input></form>'
               '<meta http-equiv="refresh" content="0;url=https://evil.example"><svg onload="steal()"></svg>'
               '<a href="https://pytorch.org">docs</a><a href="#check-1">up</a>')
    clean = sanitize(hostile)
    for word in ("steal", "script", "iframe", "form", "meta", "svg", "evil.example", "javascript"):
        assert word not in clean, word
    assert f'src="{PICTURE}"' in clean  # an embedded picture stays
    assert 'href="https://pytorch.org"' in clean and 'href="#check-1"' in clean


def test_paths_of_the_grading_machine_and_internal_keys_are_scrubbed_but_urls_kept():
    assert scrub_text("File /tmp/job-17/course/autograded/alice/01_a/01_a.ipynb, line 3") == (
        "File 01_a.ipynb, line 3")
    assert scrub_text("__autograder_serve('scale') in cell-0a1b2c3d") == "(internal)('scale') in (internal)"
    assert scrub_text("see https://pytorch.org/docs/stable/nn.html") == "see https://pytorch.org/docs/stable/nn.html"


PAGE = """<html><head><title>01_a</title><style>body { color: black; }</style></head><body>
<a href="#test_scale">Test cell</a><a name="test_scale"></a><span class="nbgrader-label">Test cell: test_scale</span>
<p>The loss is $\\ln 10$ and <code>$not maths$</code></p><pre>/work/main/source/01_a/01_a.ipynb</pre>
<!-- a comment the student wrote --></body></html>"""


def test_a_page_is_finished_once_its_cells_named_by_what_they_check():
    page = finish_html(PAGE, {"test_scale": "scale multiplies every element by the factor."})
    assert "test_scale" not in page and page.count("scale multiplies every element by the factor.") == 2
    assert 'href="#check-1"' in page and "<math" in page and "$not maths$" in page
    assert "/work/main" not in page and "01_a.ipynb" in page and "comment" not in page
    assert "body { color: black; }" in page and "<title>01_a</title>" in page
    assert finish_html(page, {"test_scale": "scale multiplies every element by the factor."}) == page


def test_the_notebook_is_cut_to_what_a_page_shows_graded_cells_first():
    cells = [nbformat.v4.new_code_cell("x" * (TEXT_LIMIT + 10), metadata={"tags": ["secret"], "nbgrader": {}})]
    cells += [nbformat.v4.new_markdown_cell("note") for _ in range(CELL_LIMIT + 5)]
    graded = nbformat.v4.new_code_cell("g" * (GRADED_TEXT + 50), metadata={"nbgrader": {"grade_id": "test_a"}})
    nb = nbformat.v4.new_notebook(cells=cells + [graded])
    cut = cap_notebook(nb)
    assert "cells left out: 6" in cut and any(line.startswith("characters cut") for line in cut)
    assert len(nb.cells) == CELL_LIMIT + 2  # the kept cells, the graded one, a line saying what is left out
    assert nb.cells[0].metadata == {"nbgrader": {}} and "[... cut: 10 more characters]" in nb.cells[0].source
    assert any(cell.source.startswith("g" * GRADED_TEXT) for cell in nb.cells)  # the graded cell keeps its text
    assert nb.cells[-1].source.startswith("[6 more cells are not shown")
