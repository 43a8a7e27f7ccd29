"""autograder/authoring/proofs.py: `check`'s proof of an assignment is reused only on the same bytes."""

from __future__ import annotations

import json
from dataclasses import asdict

import pytest

from autograder.authoring import check as check_module
from autograder.authoring import proofs
from autograder.authoring.check import AssignmentReport, check, write_report


def entry(assignment: str, digest: str) -> AssignmentReport:
    return AssignmentReport(assignment=assignment, max_score=6.0, solution_score=6.0, release_score=0.0,
                            mutants_caught=4, mutants_total=4, seconds=12.5, digest=digest)


class NoGrading:
    """A grading session that must not start: the proof was to be reused."""

    def __init__(self, *args, **kwargs):
        raise AssertionError("check graded an assignment whose proof it was given")


def test_a_proof_is_reused_on_the_same_bytes_and_made_again_after_one_changed_byte(fixture_course, tmp_path,
                                                                                    monkeypatch):
    (assignment,) = fixture_course.assignments()
    report = tmp_path / "course-report.json"
    digest = proofs.digests(fixture_course, [assignment])[assignment]
    write_report([entry(assignment, digest)], report)
    monkeypatch.setattr(check_module, "GradingSession", NoGrading)
    (reused,) = check(fixture_course, [assignment], reuse=report)
    assert reused.reused and asdict(reused) == {**asdict(entry(assignment, digest)), "reused": True}

    probe = fixture_course.root / "grading" / assignment / "probe.py"
    probe.write_text(probe.read_text().replace("rng.uniform(-3, 3)", "rng.uniform(-3, 3.5)"))  # one probe line
    with pytest.raises(AssertionError, match="whose proof it was given"):
        check(fixture_course, [assignment], reuse=report)


@pytest.mark.parametrize("change", ["source", "release", "grading", "environment", "timeout"])
def test_every_input_of_a_proof_is_in_its_digest(fixture_course, monkeypatch, change):
    (assignment,) = fixture_course.assignments()
    (fixture_course.release_dir / assignment).mkdir(parents=True, exist_ok=True)
    before = proofs.digests(fixture_course, [assignment])[assignment]
    timeout = None
    if change == "environment":
        monkeypatch.setenv("AUTOGRADER_KERNEL_MEMORY", "1G")
    elif change == "timeout":
        timeout = 30
    else:
        folder = {"source": fixture_course.source_dir, "release": fixture_course.release_dir,
                  "grading": fixture_course.root / "grading"}[change] / assignment
        (folder / "added.txt").write_text("one more file")
    assert proofs.digests(fixture_course, [assignment], timeout)[assignment] != before


def test_what_does_not_change_a_result_leaves_the_digest_alone(fixture_course, monkeypatch):
    """Where kernels come from (the test suite's shared server), and the classroom's code, are no input."""
    (assignment,) = fixture_course.assignments()
    before = proofs.digests(fixture_course, [assignment])
    monkeypatch.setenv("AUTOGRADER_KERNEL_SERVER", "/tmp/elsewhere")
    monkeypatch.setenv("AUTOGRADER_WARM_KERNELS", "0")
    assert proofs.digests(fixture_course, [assignment]) == before
    names = [name for name, _ in proofs.code_files()]
    assert "autograder/engine/job.py" in names and "autograder/authoring/check.py" in names
    assert "helpers/reference/numpy_mlp.py" in names and "autograder/probes/caller.py" in names
    assert not [name for name in names if name.startswith("autograder/classroom/")]


def test_a_failed_or_foreign_entry_is_never_reused(fixture_course, tmp_path, monkeypatch):
    (assignment,) = fixture_course.assignments()
    digest = proofs.digests(fixture_course, [assignment])[assignment]
    report = tmp_path / "course-report.json"
    failed = entry(assignment, digest)
    failed.failures = ["gate 'solution': 5/6"]
    write_report([failed], report)
    monkeypatch.setattr(check_module, "GradingSession", NoGrading)
    with pytest.raises(AssertionError, match="whose proof it was given"):
        check(fixture_course, [assignment], reuse=report)
    report.write_text(json.dumps([{**asdict(entry(assignment, digest)), "from_a_later_version": 1}]))
    with pytest.raises(AssertionError, match="whose proof it was given"):
        check(fixture_course, [assignment], reuse=report)
    report.write_text("not json")
    assert proofs.reusable(report, {assignment: digest}) == {}
