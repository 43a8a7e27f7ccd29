"""The probe contract (autograder/probes/__init__.py): what a Probe and an Exercise accept, which inputs
reach the kernel, and how the trusted side compares and judges what came back."""

from __future__ import annotations

import numpy as np
import pytest

from autograder.probes import (
    EXACT,
    Exercise,
    Probe,
    ProbeError,
    Tolerance,
    compare_arrays,
    compare_records,
    judge,
    kernel_cells,
    kernel_inputs,
    run_in_namespace,
)


def run_double(k, inputs, record):
    record("out", k.answers.double(k.value(inputs["x"])))


def probe(**changes) -> Probe:
    fields = dict(assignment="01_a", make_inputs=lambda rng: {"x": rng.standard_normal(3)},
                  exercises={"double": Exercise(run_double, expected=lambda inputs: {"out": 2 * inputs["x"]})})
    return Probe(**{**fields, **changes})


@pytest.mark.parametrize("changes,message", [
    ({"assignment": ""}, "assignment must be the assignment's folder name"),
    ({"make_inputs": 3}, "make_inputs must be a function"),
    ({"exercises": {}}, "exercises must map each exercise's name"),
    ({"exercises": {"not a name": Exercise(run_double, expected=dict)}}, "is not an exercise name"),
    ({"exercises": {"double": run_double}}, r"exercises\['double'\] must be an Exercise, got function"),
    ({"exercises": {"double": Exercise(run_double)}}, "has no expected\\(\\) and the probe names no reference"),
    ({"serve": "batches"}, "serve must be a function"),
    ({"forbidden": ("torch", 3)}, "forbidden must be a tuple of names"),
])
def test_a_probe_that_breaks_the_contract_is_refused_naming_the_field(changes, message):
    with pytest.raises(ProbeError, match=message):
        probe(**changes)


def test_an_exercise_checks_its_own_fields():
    with pytest.raises(ProbeError, match="Exercise.run must be a function"):
        Exercise("run")
    with pytest.raises(ProbeError, match="Exercise.cells must map"):
        Exercise(run_double, cells={"test_a": "not a judge"})
    with pytest.raises(ProbeError, match="Exercise.tolerance must be a Tolerance"):
        Exercise(run_double, tolerance=1e-3)


def test_private_inputs_never_reach_the_kernel():
    inputs = {"x": np.ones(2), "private.labels": np.arange(2)}
    assert list(kernel_inputs(inputs)) == ["x"]
    cells = kernel_cells(probe())
    assert len(cells) == 2 and cells[1] == "__autograder_serve('double')"
    assert "labels" not in "".join(cells) and "expected" not in "".join(cells)


def test_arrays_are_compared_by_shape_kind_and_tolerance():
    assert compare_arrays(np.ones(3), np.ones(3), 1e-5, 1e-7) is None
    assert compare_arrays(np.ones(3), np.ones(4), 1e-5, 1e-7) == "has shape (3,); expected (4,)"
    assert compare_arrays(np.array(["a"]), np.array(["b"]), 0, 0) == "is ['a']; expected ['b']"
    assert compare_arrays(np.array([np.nan]), np.array([1.0]), 1e-5, 1e-7).startswith("has nan or inf")
    assert compare_arrays(np.array([1.001]), np.array([1.0]), 1e-5, 1e-7).startswith(
        "differs from the expected values (largest difference 0.001")
    assert compare_arrays(np.array([1.001]), np.array([1.0]), 1e-2, 0) is None
    assert compare_arrays(np.array([1 + 1j]), np.array([1.0]), 1e-5, 1e-7) == "has dtype complex128; expected numbers"
    assert compare_records("f", {}, {"out": 1}) == "f gave no out"
    assert compare_records("f", {"out": np.array(2.0)}, {"out": 2.0}, EXACT) is None
    assert Tolerance() == Tolerance(1e-5, 1e-7)


def test_the_trusted_side_judges_what_the_namespace_gave_on_inputs_it_drew():
    p = probe()
    inputs = p.make_inputs(np.random.default_rng(0))
    right = run_in_namespace(p, {"double": lambda x: x * 2}, inputs)
    assert judge(p, inputs, right)["double"].ok
    wrong = run_in_namespace(p, {"double": lambda x: x + 2}, inputs)
    verdict = judge(p, inputs, wrong)["double"]
    assert not verdict.ok and verdict.message.startswith("double: out differs from the expected values")
    raised = judge(p, inputs, run_in_namespace(p, {}, inputs))["double"]
    assert not raised.ok and "raised" in raised.message
    silent = judge(p, inputs, {})["double"]
    assert "gave no result" in silent.message
