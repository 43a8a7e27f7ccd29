"""Maths on the course site as MathML, drawn by the browser: no MathJax from a CDN, no LaTeX to install."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from docutils import nodes

from autograder.authoring.site.mathml import setup, to_mathml, visit_math, visit_math_block


class Writer:
    """What Sphinx's HTML writer offers a math visitor: a body and starttag."""

    def __init__(self):
        self.body = []

    def starttag(self, node, tag, suffix="\n", **attributes):
        classes = attributes.get("CLASS", "")
        return f'<{tag} class="{classes}">{suffix}'


def test_tex_becomes_mathml_and_unreadable_tex_stays_readable_and_escaped():
    assert to_mathml(r"\frac{1}{N} \sum_i x_i", "inline").startswith("<math")
    assert 'display="block"' in to_mathml("x^2", "block")
    assert to_mathml(r"\left( <script>", "inline") == r"<code>\left( &lt;script&gt;</code>"


def test_an_inline_formula_and_each_part_of_a_block_are_drawn_in_place():
    writer = Writer()
    with pytest.raises(nodes.SkipNode):
        visit_math(writer, nodes.math(text="w_1"))
    assert writer.body[0] == '<span class="math">' and writer.body[1].startswith("<math")
    writer = Writer()
    with pytest.raises(nodes.SkipNode):
        visit_math_block(writer, nodes.math_block(text="a = b\n\nc = d"))
    assert sum(part.startswith("<math") for part in writer.body) == 2 and writer.body[-1] == "</div>\n"


def test_sphinx_gets_the_renderer_named_mathml():
    added = []
    app = SimpleNamespace(add_html_math_renderer=lambda *args: added.append(args))
    assert setup(app) == {"parallel_read_safe": True, "parallel_write_safe": True}
    assert added[0][0] == "mathml" and added[0][1][0] is visit_math and added[0][2][0] is visit_math_block
