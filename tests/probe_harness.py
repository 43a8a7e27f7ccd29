"""Drive an assignment's probe without a kernel, as tests/test_grading_folders.py does for every one.

Everything here is built per assignment, lazily and once (functools.cache), so that
`pytest -k nn_modules` pays only for 04.
"""

from __future__ import annotations

import dataclasses
import functools
import importlib.util
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

from autograder.course import exercises, grading_folder
from autograder.course.cell_code import python_only, used_names
from autograder.course.grading_folder import probe_for
from autograder.course.layout import Course
from autograder.course.notebooks import read_notebook
from autograder.course.settings import REPO_ROOT
from autograder.engine.verify import student_code
from autograder.probes import Probe, judge, run_in_namespace

COURSE = Course(REPO_ROOT)


@dataclass(frozen=True)
class Assignment:
    """What the tests of one assignment need: its probe, the cells the trusted run executes."""

    name: str
    probe: Probe
    cells: tuple[tuple[str, str], ...]  # (kind, source) as autograder.engine.verify.student_code gives them
    solutions: dict  # solution grade_id -> the exercises it defines


@functools.cache
def assignment(name: str) -> Assignment:
    source = read_notebook(COURSE.source_notebook(name))
    cells, _ = student_code(source, source)
    solutions = exercises.read(source).solutions()
    probe = probe_for(name, COURSE.root)
    assert probe is not None, f"grading/{name}/probe.py is missing"
    return Assignment(name, probe, tuple(cells), solutions)


def namespace(name: str, replace: dict[str, str] | None = None, *more: str) -> dict:
    """The names a grading kernel holds: setup, given and solution cells (a mutant's in place of its
    cell: replace = {grade_id: code}), then `more` cells run over them."""
    names: dict = {}
    for kind, text in assignment(name).cells:
        if kind.startswith("solution:") and replace and kind[9:] in replace:
            text = replace[kind[9:]]
        exec(compile(python_only(text), f"<{kind}>", "exec"), names)
    for text in more:
        exec(compile(text, "<more>", "exec"), names)
    return names


@functools.cache
def expected(name: str, seed: int) -> dict:
    """The reference's answers on the inputs of `seed`, computed once per test session."""
    probe = assignment(name).probe
    return probe.expected(probe.make_inputs(np.random.default_rng(seed)))


def failures(name: str, names: dict, seed: int, folder: Path, patches: dict | None = None,
             only: set[str] | None = None) -> dict[str, str]:
    """exercise -> message for every exercise that fails on the inputs of `seed`.

    patches: (object, attribute) -> value, in force while the student's side runs only (judging
    happens in another process when grading). only: run and judge these exercises alone (the
    others are run by a test that needs them).
    """
    probe = assignment(name).probe
    if only is not None:
        probe = dataclasses.replace(probe, exercises={e: x for e, x in probe.exercises.items() if e in only})
    inputs = probe.make_inputs(np.random.default_rng(seed))
    with pytest.MonkeyPatch.context() as mp:
        for (target, attribute), value in (patches or {}).items():
            mp.setattr(target, attribute, value)
        outputs = run_in_namespace(probe, names, inputs, folder)
    verdicts = judge(probe, inputs, outputs, expected(name, seed))
    return {exercise: v.message for exercise, v in verdicts.items() if not v.ok}


def exercises_of_mutant(name: str, replaces: str) -> set[str]:
    return set(assignment(name).solutions.get(replaces, ()))


def may_fail_with(name: str, replaces: str) -> set[str]:
    """The exercises of solution cell `replaces`, and those whose solutions call them, directly or not
    (01's train_numpy_mlp calls the student's mlp_backward): what a mistake there may fail."""
    return _closure(name, exercises_of_mutant(name, replaces))


def _uses(name: str) -> dict[str, set[str]]:
    return {kind[9:]: used_names(text) for kind, text in assignment(name).cells if kind.startswith("solution:")}


def _closure(name: str, reached: set[str]) -> set[str]:
    uses = _uses(name)
    while True:
        more = {e for gid, used in uses.items() if used & reached for e in assignment(name).solutions.get(gid, ())}
        if more <= reached:
            return reached
        reached |= more


def samples(name: str, kind: str) -> list:
    return grading_folder.samples(COURSE.root, name, kind)


def probe_module(name: str):
    """grading/<name>/probe.py imported as a module of its own: its constants and helpers beside PROBE."""
    spec = importlib.util.spec_from_file_location(f"probe_{name}", grading_folder.probe_path(COURSE.root, name))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
