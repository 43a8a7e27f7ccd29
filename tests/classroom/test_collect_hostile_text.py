"""`collect` prints nothing of a download raw (issue 37, finding 9).

File names in an LMS download are the students': a name holding ESC sequences, a carriage return
or a bidi override is shown escaped in collect's lines, never acted on by the terminal.
"""

from __future__ import annotations

import unicodedata
import zipfile

import nbformat

from autograder.__main__ import main

A = "00_fixture"
CLEAR = "\x1b[2J\x1b[HAll gates pass\r\u202e"


def raw(text: str) -> list[str]:
    return [c for c in text if unicodedata.category(c) in ("Cc", "Cf", "Zl", "Zp", "Cs")]


def test_collect_prints_no_raw_control_character(fixture_course, tmp_path, capsys):
    nb = nbformat.writes(nbformat.v4.new_notebook()).encode()
    download = tmp_path / "download.zip"
    with zipfile.ZipFile(download, "w") as archive:
        archive.writestr(f"alice/{A}.ipynb", nb)
        archive.writestr(f"alice/{CLEAR}notes.txt", b"not a notebook")
        archive.writestr(f"{CLEAR}bob/{A}.ipynb", nb)
    main(["collect", str(download), "--from", "zip", "--assignment", A,
          "--out", str(tmp_path / "submitted"), "--root", str(fixture_course.root)])
    captured = capsys.readouterr()
    printed = captured.out + captured.err
    assert raw(printed.replace("\n", "")) == [], printed
    assert "\\x1b[2J\\x1b[HAll gates pass\\r\\u202enotes.txt" in printed  # shown, escaped
