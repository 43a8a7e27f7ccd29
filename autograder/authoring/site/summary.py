"""A page's title and summary: its first heading, and the first sentences of its first paragraph,
whole. The home page lists them, and each page gives its summary as <meta name="description">.

The markdown is read by markdown-it-py (the parser MyST itself uses), so a code block, a list or
a table is never taken for a paragraph, and a link or a formula gives its words.
"""

from __future__ import annotations

import re

from nbformat import NotebookNode

SUMMARY_CHARS = 240  # a summary: whole sentences up to this length
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9(])")
_PLAIN = {"text", "code_inline", "math_inline"}  # inline tokens whose content is their words


def whole_sentences(text: str, limit: int = SUMMARY_CHARS) -> str:
    """The sentences of `text` that fit in `limit` characters, never one cut in the middle (the
    first sentence whole when it alone is longer). A sentence that ends in a colon announces
    what follows the paragraph (a code block, a list), so the summary stops before it."""
    sentences = _SENTENCE_END.split(text.strip())
    while sentences and sentences[-1].endswith(":"):
        sentences.pop()
    kept = ""
    for sentence in sentences:
        candidate = f"{kept} {sentence}".strip()
        if kept and len(candidate) > limit:
            break
        kept = candidate
    return kept


def _parser():
    from markdown_it import MarkdownIt
    from mdit_py_plugins.dollarmath import dollarmath_plugin

    return MarkdownIt("commonmark").enable("table").use(dollarmath_plugin)


def _words(inline) -> str:
    """The plain text of an inline token: its words, a link's text, a formula's TeX."""
    parts = [" " if child.type in ("softbreak", "hardbreak") else child.content
             for child in inline.children or [] if child.type in _PLAIN | {"softbreak", "hardbreak"}]
    return " ".join("".join(parts).split())


def title_and_summary(nb: NotebookNode, fallback: str) -> tuple[str, str]:
    """The first heading of the notebook and the first sentences of its first paragraph that
    has any (a paragraph at the top level: not in a list, a quote or a table)."""
    parser = _parser()
    title, summary = fallback, ""
    for cell in nb.cells:
        if cell.cell_type != "markdown":
            continue
        tokens = parser.parse(cell.source)
        for at, token in enumerate(tokens):
            if token.type == "heading_open" and title == fallback:
                title = _words(tokens[at + 1])
            elif token.type == "paragraph_open" and token.level == 0 and not summary:
                summary = whole_sentences(_words(tokens[at + 1]))
        if summary:
            break
    return title, summary
