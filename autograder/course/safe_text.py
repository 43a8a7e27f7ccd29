"""Text a submission controls, made safe for where the grader writes it: a terminal line, a CSV cell.

A student names files and folders, grade_ids, error messages and outputs; an LMS download carries
names. Written raw, ESC sequences clear the instructor's screen, move the cursor and print lines
that were never the grader's (a fake "All gates pass."), a carriage return overwrites the start of
the line, bidi overrides make a name read backwards. Every printer of `grade`, `check` and
`collect` writes its lines through `safe_line`, and every CSV the grader writes its cells through
`safe_cell` (autograder/classroom/roster.py re-exports both CSV helpers under their old home).
"""

from __future__ import annotations

import csv
import io
import re
import unicodedata

# What a terminal or a text viewer acts on rather than shows: C0 and C1 controls, DEL, ESC and
# with it every ANSI sequence (Cc); format characters, bidi overrides and isolates among them (Cf);
# line and paragraph separators (Zl, Zp); lone surrogates (Cs), which no terminal can encode.
UNSAFE = frozenset({"Cc", "Cf", "Zl", "Zp", "Cs"})
# OWASP "CSV Injection": a cell starting with one of these is read as a formula by spreadsheets.
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
_NUMBER = re.compile(r"^-?\d+(\.\d+)?(e[-+]?\d+)?$")


def _escaped(char: str) -> str:
    if char.isprintable() or unicodedata.category(char) not in UNSAFE:
        return char
    return char.encode("unicode_escape").decode("ascii")  # \x1b, \r, \n, \u202e, as Python writes them


def safe_line(text) -> str:
    """`text` as one terminal line that shows what it holds: every character of UNSAFE (newlines
    included) written as its Python escape (`\\x1b`, `\\r`, `\\n`, `\\u202e`); printable text,
    accents and other scripts included, unchanged."""
    text = "" if text is None else str(text)
    if text.isprintable():  # no character of UNSAFE: the common case, at C speed
        return text
    return "".join(map(_escaped, text))


def safe_lines(text) -> str:
    """A message that spans lines by design (nbgrader's log after its error), each line made safe
    by `safe_line`: its line breaks stay, every other UNSAFE character is escaped. Text a
    submission controls goes through `safe_line`, whose escaped newline fakes no line."""
    return "\n".join(map(safe_line, ("" if text is None else str(text)).split("\n")))


def safe_cell(value) -> str:
    """`value` as a CSV cell that no spreadsheet runs and no terminal acts on: UNSAFE characters
    escaped as `safe_line` does, then a leading = + - @ gets a `'` before it (OWASP's rule); a
    plain number such as -1.5 stays a number."""
    text = safe_line(value)
    if text.startswith(FORMULA_START) and not _NUMBER.match(text):
        return "'" + text
    return text


def csv_text(columns, rows) -> str:
    """A CSV file's text, every cell (the header too) made safe by `safe_cell`."""
    buffer = io.StringIO(newline="")
    writer = csv.writer(buffer)
    writer.writerow([safe_cell(c) for c in columns])
    writer.writerows([safe_cell(c) for c in row] for row in rows)
    return buffer.getvalue()
