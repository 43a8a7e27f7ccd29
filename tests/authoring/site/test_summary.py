"""A page's title and summary: its first heading, and whole first sentences of its first paragraph."""

from __future__ import annotations

import nbformat

from autograder.authoring.site.summary import SUMMARY_CHARS, title_and_summary, whole_sentences


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


def test_a_summary_leaves_out_the_sentence_that_announces_a_block():
    """The home page showed lecture 2 as "Every training loop you will write contains these
    lines:" and lecture 1 ending "...on the machine you are running on:"."""
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell(
        "# Graphs\n\nEvery training loop contains these lines:\n\n```python\nloss.backward()\n\n"
        "optimizer.step()\n```\n\nHow does `backward()` know what to differentiate? This "
        "notebook shows it, with [a graph](graph.md) of $W_1$.")])
    assert title_and_summary(nb, "x") == (
        "Graphs", "How does backward() know what to differentiate? This notebook shows it, with "
        "a graph of W_1.")
    nb.cells[0].source = ("# Hardware\n\nTraining is multiplying matrices. This notebook asks "
                          "how fast, on:\n\n- paper\n- a stopwatch\n")
    assert title_and_summary(nb, "x")[1] == "Training is multiplying matrices."


def test_sentences_are_kept_whole_up_to_the_limit_and_an_announcement_is_left_out():
    assert whole_sentences("One. Two. Three.", limit=9) == "One. Two."
    assert whole_sentences("One. Two. Three.", limit=8) == "One."
    assert whole_sentences("A first long sentence. B.", limit=5) == "A first long sentence."
    assert whole_sentences("Do this: ") == "" and SUMMARY_CHARS == 240


def test_a_paragraph_in_a_list_a_quote_or_a_table_is_no_summary():
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell(
        "# Title\n\n- a list item.\n\n> a quote.\n\n| a | b |\n| - | - |\n| c | d |\n\nThe summary.")])
    assert title_and_summary(nb, "x") == ("Title", "The summary.")
