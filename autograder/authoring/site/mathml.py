"""A Sphinx math renderer that writes MathML (latex2mathml), which browsers render natively.

Sphinx's own HTML renderers load MathJax from a CDN (sphinx.ext.mathjax) or need LaTeX and
dvipng (sphinx.ext.imgmath); the course site must render offline from what pip installed.
`html_math_renderer = "mathml"` in the Sphinx configuration selects this one.
"""

from __future__ import annotations

import html

from docutils import nodes


def to_mathml(tex: str, display: str) -> str:
    """MathML for `tex`; TeX that latex2mathml cannot read is shown as TeX rather than lost."""
    from latex2mathml.converter import convert

    try:
        return convert(tex.strip(), display=display)
    except Exception:
        return f"<code>{html.escape(tex)}</code>"


def visit_math(self, node: nodes.math) -> None:
    self.body.append(self.starttag(node, "span", "", CLASS="math"))
    self.body.append(to_mathml(node.astext(), "inline") + "</span>")
    raise nodes.SkipNode


def visit_math_block(self, node: nodes.math_block) -> None:
    self.body.append(self.starttag(node, "div", CLASS="math"))
    for part in (p for p in node.astext().split("\n\n") if p.strip()):
        self.body.append(to_mathml(part, "block"))
    self.body.append("</div>\n")
    raise nodes.SkipNode


def setup(app) -> dict:
    app.add_html_math_renderer("mathml", (visit_math, None), (visit_math_block, None))
    return {"parallel_read_safe": True, "parallel_write_safe": True}
