"""The probes of 02_autograd: the solution passes, every mutant fails its exercise, tampering gains nothing."""

from __future__ import annotations

import time
from pathlib import Path

import nbformat
import numpy as np
import pytest
import torch

from autograder import scan
from autograder.mutants import parse_mutant
from autograder.notebooks import grade_id, is_solution, is_test, nbgrader
from autograder.probes import judge, probe_for, run_in_namespace
from autograder.verify import student_code

ROOT = Path(__file__).resolve().parents[1]
ASSIGNMENT = "02_autograd"
NOTEBOOK = nbformat.read(ROOT / "source" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb", as_version=4)
MUTANTS = sorted((ROOT / "tests" / "mutants" / ASSIGNMENT).glob("*.py"))
PROBE = probe_for(ASSIGNMENT)
# Mutants that no input/output probe can tell from the solution: none here.
ONLY_NBGRADER_SEES: dict[str, str] = {}


def given_cells() -> list[str]:
    """grade_ids of the read-only cells (not setup, tests or the summary) whose code the solutions run after."""
    return [grade_id(c) for c in NOTEBOOK.cells if c.cell_type == "code" and nbgrader(c).get("locked")
            and not is_test(c) and grade_id(c) not in ("setup", "summary")]


def kernel_namespace(replace: dict[str, str] | None = None) -> dict:
    """What the student's kernel holds: the read-only cells and the solution cells (or replacements), in order."""
    namespace: dict = {}
    exec("import numpy as np\nimport torch", namespace)
    for cell in NOTEBOOK.cells:
        if cell.cell_type == "code" and (is_solution(cell) or grade_id(cell) in given_cells()):
            exec((replace or {}).get(grade_id(cell), cell.source), namespace)
    return namespace


def verdicts(namespace: dict, seed: int, tmp_path: Path) -> dict:
    inputs = PROBE.make_inputs(np.random.default_rng(seed))
    tmp_path.mkdir(parents=True, exist_ok=True)
    outputs = run_in_namespace(PROBE, namespace, inputs, tmp_path)
    return judge(PROBE, inputs, outputs)


def exercises_of(solution_id: str) -> set[str]:
    cell = next(c for c in NOTEBOOK.cells if grade_id(c) == solution_id)
    return scan.defined_names(cell.source)


def test_every_exercise_has_a_probe():
    exercises = set().union(*(scan.defined_names(c.source) for c in NOTEBOOK.cells if is_solution(c)))
    inputs = PROBE.make_inputs(np.random.default_rng(0))
    assert set(PROBE.expected(inputs)) == exercises
    assert set(PROBE.KERNEL_CODE) == exercises


def test_the_probe_kernel_runs_the_read_only_cells_the_answers_read():
    """answer_retain_grad is computed from the read-only regression cell's prediction and y."""
    given = [text for kind, text in student_code(NOTEBOOK, NOTEBOOK)[0] if kind == "given"]
    by_id = {grade_id(c): c.source for c in NOTEBOOK.cells}
    missing = [gid for gid in given_cells() if by_id[gid] not in given]
    assert not missing, f"autograder/verify.py leaves out the read-only cells {missing}, which solutions read"


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


def test_inputs_differ_from_seed_to_seed():
    a, b = (PROBE.make_inputs(np.random.default_rng(seed)) for seed in (0, 1))
    assert not np.array_equal(a["x"], b["x"]) or a["x"].shape != b["x"].shape


@pytest.mark.parametrize("path", MUTANTS, ids=[p.stem for p in MUTANTS])
def test_each_mutant_fails_the_exercise_it_replaces(path, tmp_path):
    if path.stem in ONLY_NBGRADER_SEES:
        pytest.skip(ONLY_NBGRADER_SEES[path.stem])
    mutant = parse_mutant(path)
    for seed in (0, 1):
        results = verdicts(kernel_namespace({mutant.replaces: mutant.code}), seed, tmp_path / str(seed))
        for exercise in exercises_of(mutant.replaces):
            assert not results[exercise].ok, f"seed {seed}: {mutant.mistake}"


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
        return iter([self, self])

    def __getitem__(self, key):
        return self


def test_answers_equal_to_everything_fail(tmp_path):
    namespace = kernel_namespace()
    exercises = set(PROBE.KERNEL_CODE)
    for name in exercises:
        namespace[name] = AlwaysEqual()
    results = verdicts(namespace, 0, tmp_path)
    assert not [name for name in exercises if results[name].ok]


def test_dicts_of_always_equal_values_fail(tmp_path):
    namespace = kernel_namespace()
    answers = [name for name in PROBE.KERNEL_CODE if name.startswith("answer_") and name != "answer_retain_grad"]
    for name in answers:
        namespace[name] = {key: AlwaysEqual() for key in namespace[name]}
    results = verdicts(namespace, 0, tmp_path)
    assert not [name for name in answers if results[name].ok]


def always_true(*args, **kwargs):
    return True


def quiet(*args, **kwargs):
    return None


@pytest.mark.parametrize("path", MUTANTS, ids=[p.stem for p in MUTANTS])
def test_patched_checks_do_not_rescue_a_wrong_answer(path, tmp_path, monkeypatch):
    """The student's kernel patches every check it can think of; the trusted judge runs after, unpatched."""
    mutant = parse_mutant(path)
    namespace = kernel_namespace({mutant.replaces: mutant.code})
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


def test_a_graph_walk_in_another_order_fails(tmp_path):
    """graph_ops depth-first, every node once: the right names in the wrong order."""
    namespace = kernel_namespace()

    def depth_first(t):
        names, stack, seen = [], [t.grad_fn], set()
        while stack:
            node = stack.pop()
            if node is None or node in seen:
                continue
            seen.add(node)
            names.append(type(node).__name__)
            stack.extend(child for child, _ in reversed(node.next_functions))
        return names

    namespace["graph_ops"] = depth_first
    assert not verdicts(namespace, 0, tmp_path)["graph_ops"].ok


def test_a_correct_answer_written_differently_passes(tmp_path):
    """Other spellings of the same answers: torch.relu, .zero_() on clones, np.asarray, numpy bools."""
    namespace = kernel_namespace()
    exec('''
def torch_mlp_forward(x, w1, w2):
    return torch.relu(x @ w1) @ w2


def autograd_gradients(x, y, w1, w2):
    for w in (w1, w2):
        if w.grad is not None:
            w.grad.zero_()
    ((torch_mlp_forward(x, w1, w2) - y).pow(2).sum()).backward()
    grads = w1.grad.clone(), w2.grad.clone()
    w1.grad.zero_()
    w2.grad.zero_()
    return grads


def to_numpy(t):
    return np.asarray(t.detach().to("cpu"))


answer_detach = {"requires_grad": np.bool_(False), "shares_memory": np.bool_(True), "numpy_raises": True}
answer_retain_grad = ((prediction - y) * 2 / len(prediction)).detach().numpy().astype(np.float64)
''', namespace)
    failed = {name: v.message for name, v in verdicts(namespace, 1, tmp_path).items() if not v.ok}
    assert not failed
