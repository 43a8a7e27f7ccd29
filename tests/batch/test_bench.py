"""`python -m autograder bench`: our grade and plain nbgrader on one batch, in one run."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

pytestmark = pytest.mark.slow


def test_bench_times_both_on_the_same_batch_and_their_scores_agree(released_course, tmp_path):
    submitted = tmp_path / "in"
    for who, notebook in (("alice", released_course.source_notebook("00_fixture")),
                          ("bob", released_course.release_notebook("00_fixture"))):
        (submitted / who / "00_fixture").mkdir(parents=True)
        (submitted / who / "00_fixture" / "00_fixture.ipynb").write_bytes(notebook.read_bytes())
    out = tmp_path / "bench"
    run = subprocess.run(
        [sys.executable, "-m", "autograder", "bench", str(submitted), "--root",
         str(released_course.root), "--out", str(out), "--jobs", "2"],
        capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stdout + run.stderr
    report = json.loads((out / "bench.json").read_text())
    assert (report["submissions"], report["assignments"], report["jobs"]) == (2, ["00_fixture"], 2)
    for side in ("nbgrader", "ours"):
        assert report[side]["seconds"] > 0
        assert report[side]["submissions_per_minute"] == pytest.approx(
            2 * 60 / report[side]["seconds"], rel=0.01)
    assert report["ratio"] == pytest.approx(report["nbgrader"]["seconds"] / report["ours"]["seconds"],
                                            rel=0.01)
    # Both really graded: nbgrader's gradebook and our grades.csv give the same scores.
    assert report["scores_agree"] and report["differences"] == []
    assert (out / "nbgrader" / "autograded" / "alice" / "00_fixture" / "00_fixture.ipynb").is_file()
    assert "alice,00_fixture,6,6,graded" in (out / "ours" / "grades" / "grades.csv").read_text()
    assert "plain nbgrader autograde: 2 submissions" in run.stdout
    assert "ratio:" in run.stdout
