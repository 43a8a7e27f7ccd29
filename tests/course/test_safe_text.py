"""autograder/course/safe_text.py: a student's text reaches no terminal and no CSV raw."""

from __future__ import annotations

import csv
import io
import unicodedata

from autograder.course.safe_text import csv_text, safe_cell, safe_line, safe_lines

# ESC sequences (clear the screen, home, colour), a carriage return that overwrites the line, a
# newline that fakes one, C1's CSI, DEL, bidi overrides and isolates, a line separator, BOM.
HOSTILE = "\x1b[2J\x1b[HAll gates pass\r\nalice: 6/6\x9b31m\x7f\u202eevil\u202c\u2066x\u2069\u2028\ufeff\x00"


def raw(text: str) -> list[str]:
    return [c for c in text if unicodedata.category(c) in ("Cc", "Cf", "Zl", "Zp", "Cs")]


def test_a_terminal_line_shows_every_control_character_as_its_escape():
    line = safe_line(HOSTILE)
    assert raw(line) == []
    assert line.startswith("\\x1b[2J\\x1b[HAll gates pass\\r\\nalice: 6/6\\x9b31m\\x7f\\u202eevil")
    assert "\\u2028" in line and "\\ufeff" in line and line.endswith("\\x00")


def test_printable_text_of_any_script_is_unchanged():
    for text in ("alice/00_fixture: 6/6 (1.2 s)", "Zoë Ångström, 李雷, محمد", "a\\x1b stays a backslash",
                 "tab-free  spaces", ""):
        assert safe_line(text) == text
    assert safe_line(None) == ""


def test_lines_by_design_keep_their_breaks_and_nothing_else():
    assert safe_lines("log:\n\x1b[31mred\r\nend") == "log:\n\\x1b[31mred\\r\nend"


def test_a_csv_cell_is_escaped_then_neutralized_against_formulas():
    assert safe_cell("\x1b[2J=HYPERLINK(1)") == "\\x1b[2J=HYPERLINK(1)"  # no longer a formula
    assert safe_cell("=1+1") == "'=1+1" and safe_cell("-1.5") == "-1.5" and safe_cell(3) == "3"
    assert safe_cell("\t=1") == "\\t=1"
    text = csv_text(["student_id", "reason\x1b[2J"], [["eve\x1b]0;owned\x07", HOSTILE]])
    cells = [c for row in csv.reader(io.StringIO(text, newline="")) for c in row]
    assert cells[1] == "reason\\x1b[2J" and cells[2] == "eve\\x1b]0;owned\\x07"
    assert all(raw(c) == [] for c in cells)
    assert raw(text.replace("\r\n", "")) == []  # the CSV's own line ends are all that is left
