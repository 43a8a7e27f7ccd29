"""The setup cell rendered from its template: one head for every notebook, its addresses from
[tool.course]; what follows the anchor line is the notebook's own (the head run: test_setup_cell_head.py)."""

from __future__ import annotations

import nbformat
import pytest

from autograder.authoring import setup_cell
from autograder.authoring.setup_cell import (
    ANCHOR,
    SetupCellError,
    apply_setup_cell,
    first_code_cell,
    not_installed_message,
    render_head,
    rewrite_setup_cell,
    setup_head,
)
from autograder.course.settings import REPO_ROOT, CourseSettings, course_settings

SETTINGS = CourseSettings("my-uni/dl-course", "main", "0.3.0")


def test_the_head_carries_the_wheel_and_the_students_line_as_double_quoted_literals():
    head = render_head(SETTINGS)
    assert head.endswith(ANCHOR) and head.startswith("# Setup (read-only)")
    assert f'WHEEL = "{SETTINGS.wheel_url}"' in head
    assert '"{wheel_url}"' not in head and '"{not_installed}"' not in head
    assert not_installed_message(SETTINGS).endswith(f"the package did not install from {SETTINGS.wheel_url}")
    compile(head, "<setup cell>", "exec")  # valid Python, whatever the addresses hold
    odd = CourseSettings('uni/x"y\\', "main", "1.0")  # quotes and a backslash: still one literal
    compile(render_head(odd), "<setup cell>", "exec")
    assert setup_head(REPO_ROOT) == render_head(course_settings(REPO_ROOT))


def test_rewriting_replaces_everything_up_to_the_anchor_and_keeps_the_notebooks_imports():
    old = "# an old head\ntry:\n    import helpers\nexcept ImportError:\n    pass\ndevice = helpers.setup()\nimport torch\n"
    assert rewrite_setup_cell(old, "HEAD\n" + ANCHOR) == "HEAD\n" + ANCHOR + "\nimport torch"
    with pytest.raises(SetupCellError, match=r"01_a.ipynb: the first code cell must be the setup cell"):
        rewrite_setup_cell("import torch\n", "HEAD", "01_a.ipynb")


def test_a_notebook_is_rewritten_in_place_once():
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("# Title"),
                                         nbformat.v4.new_code_cell(f"old\n{ANCHOR}\nimport numpy as np")])
    head = render_head(SETTINGS)
    assert apply_setup_cell(nb, head) is True
    assert nb.cells[1].source == head + "\nimport numpy as np"
    assert apply_setup_cell(nb, head) is False
    with pytest.raises(SetupCellError, match="no code cell, so no setup cell"):
        first_code_cell(nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("x")]), "x.ipynb")


def test_a_template_without_its_placeholder_or_anchor_is_refused(tmp_path, monkeypatch):
    template = tmp_path / "head.py"
    template.write_text(f"{setup_cell.CUT}WHEEL = 1\n{ANCHOR}\n")
    monkeypatch.setattr(setup_cell, "TEMPLATE_FILE", template)
    with pytest.raises(RuntimeError, match='expected "{wheel_url}" exactly once'):
        render_head(SETTINGS)
    template.write_text(f'{setup_cell.CUT}W = "{{wheel_url}}"\nN = "{{not_installed}}"\n')
    with pytest.raises(RuntimeError, match="must end with the line"):
        render_head(SETTINGS)
