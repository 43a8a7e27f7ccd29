"""Every assignment's grading folder (grading/<assignment>/): one suite, parametrized over the course.

For each assignment: every exercise of the notebook is probed and every probed exercise exists;
the solution passes its probe on several seeds; every mutant fails its own exercise's probe and only
it; answers equal to everything rescue nothing; patched oracles rescue no mutant. These run the probe
in this process, on the solution cells. The right and wrong answers of variants/ and wrong/ are graded
as notebooks by `check` (its gates 'right answers' and 'wrong answers', trusted run included), and
tests/test_pipeline.py holds a test per file over check's report. Test ids carry the assignment
(`pytest -k nn_modules`); everything an assignment needs is built lazily, once.
"""

from __future__ import annotations

import functools
import tempfile
from pathlib import Path

import numpy as np
import pytest
import torch
from probe_harness import (
    COURSE,
    assignment,
    exercises_of_mutant,
    failures,
    may_fail_with,
    namespace,
    samples,
)

from autograder.course import grading_folder
from autograder.course.mutants import parse_mutant

ASSIGNMENTS = COURSE.assignments()
SEEDS = (0, 1, 2)


def each(kind: str) -> list:
    """(assignment, path) for every file of grading/*/<kind>/, with readable ids."""
    return [pytest.param(a, path, id=f"{a}-{path.stem}")
            for a in ASSIGNMENTS for path in grading_folder.files(COURSE.root, a, kind)]


@pytest.mark.parametrize("name", ASSIGNMENTS)
def test_every_exercise_is_probed_and_every_probe_is_an_exercise(name):
    probed = set(assignment(name).probe.exercises)
    exercises = {e for names in assignment(name).solutions.values() for e in names}
    assert probed == exercises, (f"grading/{name}/probe.py: not probed {sorted(exercises - probed)}; "
                                 f"probed but not in the notebook {sorted(probed - exercises)}")


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("name", ASSIGNMENTS)
def test_the_solution_passes_its_probe(name, seed, tmp_path):
    assert failures(name, namespace(name), seed, tmp_path) == {}


@pytest.mark.parametrize("name, path", each("mutants"))
def test_every_mutant_fails_its_exercise_and_only_it(name, path, tmp_path):
    """Only it, and the exercises whose solutions call it (may_fail_with). Seed 0 probes every exercise
    that can see the mutated cell at all (`touched`: those that fail with the cell emptied); the others
    cannot fail with any mutant of it, so probing them for every mutant (a third of this file's time)
    proved nothing more. Seed 1 probes the mutant's own exercises: it fails them on other inputs too."""
    mutant = parse_mutant(path)
    exercises = exercises_of_mutant(name, mutant.replaces)
    assert exercises, f"{path}: '# replaces: {mutant.replaces}' names no solution cell with an exercise"
    reached = may_fail_with(name, mutant.replaces)
    names = namespace(name, {mutant.replaces: mutant.code})
    failed = failures(name, names, 0, tmp_path / "0", only=reached | touched(name, mutant.replaces))
    assert set(failed) & exercises, (mutant.mistake, failed)
    assert set(failed) <= reached, (mutant.mistake, failed)
    failed = failures(name, names, 1, tmp_path / "1", only=exercises)
    assert set(failed) & exercises, ("seed 1", mutant.mistake, failed)


@functools.cache
def touched(name: str, gid: str) -> frozenset[str]:
    """The exercises that fail on seed 0 with solution cell `gid` emptied (nothing it defines exists):
    every exercise whose solution or probe reads what the cell defines. One that passes without the
    cell never reads it, so no mutant of the cell can fail it."""
    with tempfile.TemporaryDirectory() as folder:
        return frozenset(failures(name, namespace(name, {gid: "pass"}), 0, Path(folder)))


def solution_cells() -> list:
    """(assignment, grade id) of every solution cell that defines an exercise."""
    return [pytest.param(a, gid, id=f"{a}-{gid}") for a in ASSIGNMENTS
            for gid, names in assignment(a).solutions.items() if names]


@pytest.mark.parametrize("name, gid", solution_cells())
def test_an_emptied_solution_cell_fails_its_own_exercises(name, gid):
    """What `touched` rests on: without the cell, its exercises fail (the probe sees the cell at all)."""
    assert touched(name, gid) >= exercises_of_mutant(name, gid), sorted(touched(name, gid))


class AlwaysEqual:
    """What a hostile answer returns: equal to, less and greater than everything, any shape asked."""

    def __eq__(self, other):
        return True

    def __ne__(self, other):
        return False

    def __lt__(self, other):
        return True

    def __gt__(self, other):
        return True

    __le__, __ge__ = __lt__, __gt__
    __hash__ = object.__hash__

    def __bool__(self):
        return True

    def __float__(self):
        return 0.005

    def __int__(self):
        return 0

    def __index__(self):
        return 0

    def __len__(self):
        return 2

    def __iter__(self):
        return iter([AlwaysEqual(), AlwaysEqual()])

    def __getitem__(self, key):
        return AlwaysEqual()

    def __getattr__(self, name):
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        return AlwaysEqual()

    def __call__(self, *args, **kwargs):
        return AlwaysEqual()


def _always_equal(*args, **kwargs):
    return AlwaysEqual()


def fake(value, whole: bool):
    """What a hostile answer puts in place of `value`: a function returning AlwaysEqual; a class whose
    own methods do (whole: AlwaysEqual itself); a dict of AlwaysEqual values; or AlwaysEqual."""
    if isinstance(value, type):
        if whole:
            return AlwaysEqual
        methods = {}
        for key, member in vars(value).items():
            if key in ("__init__", "__new__", "__init_subclass__", "__module__", "__doc__", "__qualname__"):
                continue
            if isinstance(member, staticmethod):
                methods[key] = staticmethod(_always_equal)
            elif isinstance(member, classmethod):
                methods[key] = classmethod(_always_equal)
            elif callable(member):
                methods[key] = _always_equal
        return type(value.__name__, (value,), methods)
    if callable(value):
        return _always_equal
    if isinstance(value, dict):
        return {key: AlwaysEqual() for key in value}
    return AlwaysEqual()


@pytest.mark.parametrize("whole", [False, True], ids=["methods", "whole-class"])
@pytest.mark.parametrize("name", ASSIGNMENTS)
def test_answers_equal_to_everything_rescue_nothing(name, whole, tmp_path):
    names = namespace(name)
    exercises = set(assignment(name).probe.exercises)
    for exercise in exercises:
        names[exercise] = fake(names[exercise], whole)
    assert set(failures(name, names, 0, tmp_path)) == exercises


def always(value):
    return lambda *args, **kwargs: value


CHECKS = {(np, "allclose"): always(True), (np, "array_equal"): always(True),
          (np.testing, "assert_allclose"): always(None), (torch, "allclose"): always(True),
          (torch, "equal"): always(True), (torch.testing, "assert_close"): always(None),
          (torch.autograd, "gradcheck"): always(True)}


@pytest.mark.parametrize("name, path", each("mutants"))
def test_patched_oracles_rescue_no_mutant(name, path, tmp_path):
    """The student's kernel patches every check it can think of; the trusted judge runs after, unpatched."""
    mutant = parse_mutant(path)
    names = namespace(name, {mutant.replaces: mutant.code})
    names.update({attribute: fake for (_, attribute), fake in CHECKS.items()})
    exercises = exercises_of_mutant(name, mutant.replaces)
    failed = failures(name, names, 0, tmp_path, patches=CHECKS, only=exercises)
    assert set(failed) & exercises


@pytest.mark.parametrize("name", ASSIGNMENTS)
def test_every_assignment_has_mutants_and_variants(name):
    assert len(grading_folder.files(COURSE.root, name, "mutants")) >= 4
    assert samples(name, "variants"), f"grading/{name}/variants/ is empty: a rule never met a right answer"


def scan_named() -> list:
    """(assignment, wrong answer) for every wrong answer the scan already names: check sees the scan's words."""
    from autograder.engine import scan

    return [pytest.param(a, sample, id=f"{a}-{sample.name}") for a in ASSIGNMENTS
            for sample in samples(a, "wrong") if scan.findings(sample.code, ())]


@pytest.mark.parametrize("name, sample", scan_named())
def test_a_wrong_answer_the_scan_names_fails_its_probe_behind_the_scan(name, sample, tmp_path):
    """Two locks, each proven alone: a backward that reaches around the trusted run's watches (autograd's engine
    by hand, the dispatch keys excluded) is named by the scan, and the probe's watch fails it even so."""
    names = namespace(name, None, sample.code)
    failed = failures(name, names, 0, tmp_path, only={sample.exercise})
    assert sample.exercise in failed, (sample.path.name, failed)
