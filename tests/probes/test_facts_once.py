"""`facts_once`: what the installed library does is measured once per grading process, not per submission."""

from __future__ import annotations

from autograder.course.grading_folder import load_probe
from autograder.course.settings import REPO_ROOT
from autograder.probes import facts_once


def test_facts_are_measured_once_and_each_caller_gets_its_own_copy():
    calls = []

    def measure():
        calls.append(1)
        return {"alive": [True, False]}

    first = facts_once("test.measure", measure)
    first["alive"].append("changed by a caller")
    assert facts_once("test.measure", measure) == {"alive": [True, False]}
    assert len(calls) == 1


def test_02s_graph_questions_are_measured_once_across_probe_loads(monkeypatch):
    """Every graded 02 loads its probe afresh; the gc-heavy measurement of which graphs stay alive
    (1.6 CPU-s a submission, measured) runs in the first only."""
    import gc

    collections = []
    real = gc.collect
    monkeypatch.setattr(gc, "collect", lambda *a: collections.append(1) or real(*a))
    path = REPO_ROOT / "grading" / "02_autograd" / "probe.py"
    results = []
    for _ in range(2):
        probe = load_probe(path)
        results.append(probe.exercises["answer_graph_alive"].expected({}))
    assert results[0] == results[1] and results[0]["keys"]
    assert len(collections) <= 6  # one measurement's worth (six loops), whichever test measured first
