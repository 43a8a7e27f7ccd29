"""`python -m autograder bench`: our grade and plain nbgrader on one batch, in one run."""

from __future__ import annotations

import json
import subprocess
import sys

import nbformat
import pytest

from autograder.course.notebooks import grade_id

pytestmark = pytest.mark.slow

# A right `scale` that also writes to stderr: nbgrader, by its own defaults, zeroes every test cell
# that writes there; our configuration drops stderr before scoring (QuietStderr).
WARNS = 'import sys\n\n\ndef scale(x, factor):\n    print("a note", file=sys.stderr)\n    return x * factor'


def test_bench_times_both_on_the_same_batch_against_nbgraders_own_defaults(released_course, tmp_path):
    submitted = tmp_path / "in"
    for who, notebook in (("alice", released_course.source_notebook("00_fixture")),
                          ("bob", released_course.release_notebook("00_fixture"))):
        (submitted / who / "00_fixture").mkdir(parents=True)
        (submitted / who / "00_fixture" / "00_fixture.ipynb").write_bytes(notebook.read_bytes())
    carol = nbformat.read(released_course.source_notebook("00_fixture"), as_version=4)
    for cell in carol.cells:
        if grade_id(cell) == "scale":
            cell.source = WARNS
    (submitted / "carol" / "00_fixture").mkdir(parents=True)
    nbformat.write(carol, submitted / "carol" / "00_fixture" / "00_fixture.ipynb")
    out = tmp_path / "bench"
    run = subprocess.run(
        [sys.executable, "-m", "autograder", "bench", str(submitted), "--root",
         str(released_course.root), "--out", str(out), "--jobs", "2"],
        capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stdout + run.stderr
    report = json.loads((out / "bench.json").read_text())
    assert (report["submissions"], report["assignments"], report["jobs"]) == (3, ["00_fixture"], 2)
    # Both really graded, each by its own rules: nbgrader's defaults zero carol's test cells of
    # scale for what they wrote to stderr (before, bench loaded our configuration: they agreed).
    assert report["differences"] == [{"student_id": "carol", "assignment": "00_fixture",
                                      "nbgrader": 3.0, "ours": 6.0}], report["differences"]
    for side in ("nbgrader", "ours"):
        assert report[side]["seconds"] > 0 and report[side]["cpu_seconds"] > 0
        assert report[side]["submissions_per_minute"] == pytest.approx(
            3 * 60 / report[side]["seconds"], rel=0.01)
    assert report["ratio"] == pytest.approx(report["nbgrader"]["seconds"] / report["ours"]["seconds"],
                                            rel=0.01)
    assert report["cpu_ratio"] == pytest.approx(
        report["nbgrader"]["cpu_seconds"] / report["ours"]["cpu_seconds"], rel=0.01)
    assert "load_subconfig" not in (out / "nbgrader" / "nbgrader_config.py").read_text()
    assert (out / "nbgrader" / "autograded" / "alice" / "00_fixture" / "00_fixture.ipynb").is_file()
    assert "alice,00_fixture,6,6,graded" in (out / "ours" / "grades" / "grades.csv").read_text()
    assert "plain nbgrader autograde: 3 submissions" in run.stdout
    assert "x wall on" in run.stdout and "x per CPU" in run.stdout, run.stdout
