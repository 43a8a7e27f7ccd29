"""The probes of 03_custom_functions: the solution passes, every mutant fails its exercise, tampering gains nothing."""

from __future__ import annotations

import time
from pathlib import Path

import nbformat
import numpy as np
import pytest
import torch
from notebook_solutions import solution_namespace

from autograder import scan
from autograder.mutants import parse_mutant
from autograder.notebooks import grade_id, is_solution
from autograder.probes import judge, probe_for, run_in_namespace

ROOT = Path(__file__).resolve().parents[1]
ASSIGNMENT = "03_custom_functions"
NOTEBOOK = ROOT / "source" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
MUTANTS = sorted((ROOT / "tests" / "mutants" / ASSIGNMENT).glob("*.py"))
PROBE = probe_for(ASSIGNMENT)
# Mutants that no input/output probe can tell from the solution: none here.
ONLY_NBGRADER_SEES: dict[str, str] = {}


def kernel_namespace(code: str = "") -> dict:
    """The solution cells run, then `code` (a mutant: the cell it replaces, defined again)."""
    namespace = solution_namespace(NOTEBOOK)
    exec(code, namespace)
    return namespace


def verdicts(namespace: dict, seed: int, folder: Path) -> dict:
    inputs = PROBE.make_inputs(np.random.default_rng(seed))
    folder.mkdir(parents=True, exist_ok=True)
    return judge(PROBE, inputs, run_in_namespace(PROBE, namespace, inputs, folder))


def exercises_of(solution_id: str) -> set[str]:
    cells = nbformat.read(NOTEBOOK, as_version=4).cells
    return scan.defined_names(next(c for c in cells if grade_id(c) == solution_id).source)


def test_every_exercise_has_a_probe():
    cells = nbformat.read(NOTEBOOK, as_version=4).cells
    exercises = set().union(*(scan.defined_names(c.source) for c in cells if is_solution(c)))
    assert set(PROBE.expected(PROBE.make_inputs(np.random.default_rng(0)))) == exercises
    assert set(PROBE.KERNEL_CODE) == exercises


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_the_solution_passes_every_exercise(seed, tmp_path):
    failed = {name: v.message for name, v in verdicts(kernel_namespace(), seed, tmp_path).items() if not v.ok}
    assert not failed


def test_the_probes_are_deterministic_and_quick(tmp_path):
    inputs = PROBE.make_inputs(np.random.default_rng(5))
    start = time.perf_counter()
    first = run_in_namespace(PROBE, kernel_namespace(), inputs, tmp_path)
    seconds = time.perf_counter() - start
    second = run_in_namespace(PROBE, kernel_namespace(), inputs, tmp_path)
    assert first.keys() == second.keys()
    assert all(np.array_equal(first[k], second[k]) for k in first)
    assert seconds < 5, f"the probes of {ASSIGNMENT} took {seconds:.1f} s"


def test_relu_inputs_stay_away_from_the_kink():
    inputs = PROBE.make_inputs(np.random.default_rng(7))
    assert all(np.abs(inputs[k]).min() >= 0.05 - 1e-6 for k in inputs if k.lower().startswith("relu.x"))


@pytest.mark.parametrize("path", MUTANTS, ids=[p.stem for p in MUTANTS])
def test_each_mutant_fails_the_exercise_it_replaces(path, tmp_path):
    if path.stem in ONLY_NBGRADER_SEES:
        pytest.skip(ONLY_NBGRADER_SEES[path.stem])
    mutant = parse_mutant(path)
    for seed in (0, 1):
        results = verdicts(kernel_namespace(mutant.code), seed, tmp_path / str(seed))
        for exercise in exercises_of(mutant.replaces):
            assert not results[exercise].ok, f"seed {seed}: {mutant.mistake}"


def test_saving_more_than_needed_still_passes(tmp_path):
    """Saving the input and the output is wasteful, not wrong: the output is among what Sigmoid saved."""
    namespace = kernel_namespace('''
class Sigmoid(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        y = torch.sigmoid(x)
        ctx.save_for_backward(x, y)
        return y

    @staticmethod
    def backward(ctx, grad_y):
        _, y = ctx.saved_tensors
        return grad_y * y * (1 - y)
''')
    assert verdicts(namespace, 2, tmp_path)["Sigmoid"].ok


def test_the_message_says_what_was_saved(tmp_path):
    mutant = parse_mutant(ROOT / "tests" / "mutants" / ASSIGNMENT / "sigmoid_saves_input.py")
    message = verdicts(kernel_namespace(mutant.code), 0, tmp_path)["Sigmoid"].message
    assert "none of them its output" in message


def test_torchs_own_functions_are_not_the_students(tmp_path):
    """torch.sigmoid and torch.relu give the right numbers, but not one node of the student's Function."""
    namespace = kernel_namespace("sigmoid = torch.sigmoid\nrelu = torch.relu")
    results = verdicts(namespace, 0, tmp_path)
    assert not results["sigmoid"].ok and not results["relu"].ok
    assert "nodes" in results["sigmoid"].message


class AlwaysEqual:
    """What a hostile answer returns: equal to everything, true, and shaped like anything asked."""

    def __eq__(self, other):
        return True

    def __bool__(self):
        return True

    def __getattr__(self, name):
        return self

    def __call__(self, *args, **kwargs):
        return self

    def __iter__(self):
        return iter([self])

    def __getitem__(self, key):
        return self


def test_answers_equal_to_everything_fail(tmp_path):
    namespace = kernel_namespace()
    for name in PROBE.KERNEL_CODE:
        namespace[name] = AlwaysEqual()
    results = verdicts(namespace, 0, tmp_path)
    assert not [name for name in PROBE.KERNEL_CODE if results[name].ok]


def always_true(*args, **kwargs):
    return True


def quiet(*args, **kwargs):
    return None


@pytest.mark.parametrize("path", MUTANTS, ids=[p.stem for p in MUTANTS])
def test_patched_checks_do_not_rescue_a_wrong_answer(path, tmp_path, monkeypatch):
    """The student's kernel patches every check it can think of; the trusted judge runs after, unpatched."""
    mutant = parse_mutant(path)
    namespace = kernel_namespace(mutant.code)
    inputs = PROBE.make_inputs(np.random.default_rng(0))
    with monkeypatch.context() as patch:  # undone before judging: the judge runs in another process
        for module, name, fake in [(np, "allclose", always_true), (np, "array_equal", always_true),
                                   (np.testing, "assert_allclose", quiet), (torch, "allclose", always_true),
                                   (torch, "equal", always_true), (torch.testing, "assert_close", quiet),
                                   (torch.autograd, "gradcheck", always_true)]:
            patch.setattr(module, name, fake)
            namespace[name] = fake
        outputs = run_in_namespace(PROBE, namespace, inputs, tmp_path)
    results = judge(PROBE, inputs, outputs)
    assert not [name for name in exercises_of(mutant.replaces) if results[name].ok]
