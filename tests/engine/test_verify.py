"""The trusted run's parts without a kernel: the scan, cell selection, seeds, comparison, coverage."""

from __future__ import annotations

import copy
from pathlib import Path

import numpy as np
import pytest

from autograder.course import exercises
from autograder.course.grading_folder import probe_for
from autograder.course.layout import Course
from autograder.course.notebooks import grade_id, read_notebook
from autograder.engine import scan, verify
from autograder.probes import (
    Exercise,
    Probe,
    ProbeError,
    compare_arrays,
    judge,
    kernel_cells,
)

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("code, found", [
    ("import torch\nx = torch.zeros(1)", ["line 1: torch", "line 2: torch"]),
    ("from helpers.reference.numpy_mlp import relu", ["line 1: helpers.reference"]),
    ("m = __import__('tor' + 'ch')", ["line 1: __import__"]),
    ("f = getattr(helpers, 'reference')", ["line 1: helpers"]),
    ("import importlib\nm = importlib.import_module('helpers.reference')", ["line 1: importlib", "line 2: helpers.reference",
                                                                          "line 2: importlib"]),
    ("get_ipython().ast_transformers.append(x)", ["line 1: get_ipython"]),
    ("text = open('/etc/passwd').read()", ["line 1: open"]),
    ("%timeit relu(h)\nimport numpy as np\nopenai = 1", []),
    ("def relu(h):\n    return np.maximum(h, 0)", []),
])
def test_the_scan_names_what_no_answer_needs(code, found):
    assert scan.findings(code, forbidden=("torch", "helpers")) == found


def test_a_seed_is_fixed_per_submission_and_secret_per_key():
    assert verify.seed_for("k", "alice", "01") == verify.seed_for("k", "alice", "01")
    assert len({verify.seed_for(k, s, "01") for k in ("k", "l") for s in ("alice", "bob")}) == 4


def test_arrays_are_compared_by_shape_kind_and_value():
    want = np.arange(6.0).reshape(2, 3)
    assert compare_arrays(want + 1e-9, want, rtol=1e-5, atol=1e-7) is None
    assert "shape" in compare_arrays(want.T, want, rtol=1e-5, atol=1e-7)
    assert "differs" in compare_arrays(want * 2, want, rtol=1e-5, atol=1e-7)
    assert "nan" in compare_arrays(want * np.nan, want, rtol=1e-5, atol=1e-7)
    assert compare_arrays(np.array(["a"]), np.array(["b"]), rtol=0, atol=0)
    assert compare_arrays(np.array(1.0), np.array(True), rtol=0, atol=0)


def test_the_trusted_run_takes_locked_cells_from_the_source_and_answers_from_the_student():
    source = read_notebook(Course(ROOT).source_notebook("01_numpy_mlp"))
    submitted = copy.deepcopy(source)
    submitted.cells[0].source = "import numpy as np  # setup edited by the student"
    for cell in submitted.cells:
        if grade_id(cell) == "relu":
            cell.source = "def relu(h):\n    return h  # the student's answer"
    submitted.cells.append(copy.deepcopy(submitted.cells[0]))
    submitted.cells[-1].metadata = {}
    submitted.cells[-1].source = "EPS = 1e-5  # a cell the student added"
    cells, _ = verify.student_code(submitted, source)
    kinds = dict((kind, text) for kind, text in cells)
    assert kinds["setup"] == source.cells[0].source
    assert kinds["solution:relu"].endswith("the student's answer")
    assert kinds["added"].startswith("EPS")
    assert not any("check_" in text for kind, text in cells if kind != "setup")  # no test cell


@pytest.mark.parametrize("assignment", Course(ROOT).assignments())
def test_every_exercise_of_every_assignment_has_a_probe(assignment):
    course = Course(ROOT)
    probe = probe_for(assignment, course.root)
    assert probe is not None, f"grading/{assignment}/probe.py is missing"
    source = read_notebook(course.source_notebook(assignment))
    names = exercises.read(source).names()
    assert names <= set(probe.exercises), (assignment, names - set(probe.exercises))


@pytest.mark.parametrize("assignment", Course(ROOT).assignments())
def test_no_line_of_the_probe_reaches_the_kernel_only_the_caller_and_the_stand_ins(assignment):
    """The kernel's cells start the fixed caller with the stand-ins' text (grading/<a>/given.py) and name
    the exercises: no expected value, tolerance or judge of probe.py travels (the kernel is not a witness)."""
    probe = probe_for(assignment, ROOT)
    cells = kernel_cells(probe)
    probe_lines = {line.strip() for line in (ROOT / "grading" / assignment / "probe.py").read_text().splitlines()
                   if len(line.strip()) > 20 and not line.strip().startswith(("#", '"""', "import", "from"))}
    sent = "\n".join(cells).replace(repr(probe.given or None), "")
    assert "autograder.probes.caller" in cells[0] and "grading/" not in sent
    assert not [line for line in probe_lines if line in sent], "probe.py's code was sent into the kernel"
    assert cells[1:] == [f"__autograder_serve({name!r})" for name in probe.exercises]
    namespace: dict = {}
    exec(cells[0], namespace)  # the cell is Python, whatever the stand-ins hold (none, quotes, unicode)
    assert callable(namespace["__autograder_serve"])


def test_a_probe_that_breaks_the_contract_is_refused_when_it_loads():
    def run(k, inputs, record):
        record("x", 1)

    with pytest.raises(ProbeError, match="exercises\\['relu'\\] must be an Exercise"):
        Probe("01_numpy_mlp", make_inputs=dict, exercises={"relu": run}, reference="numpy")
    with pytest.raises(ProbeError, match="no expected\\(\\) and the probe names no reference"):
        Probe("01_numpy_mlp", make_inputs=dict, exercises={"relu": Exercise(run)})
    with pytest.raises(ProbeError, match="Exercise.judge must be a function"):
        Exercise(run, judge="compare")


def test_a_cells_own_judgment_withdraws_that_cell_alone():
    """Exercise.cells: a passing exercise whose tier cell fails keeps every other cell's points."""
    def tier(got, want):
        return None if got["accuracy"] >= 0.8 else f"tier needs 80 %, got {got['accuracy']:.0%}"

    probe = Probe(assignment="00_tiers", make_inputs=lambda rng: {"x": np.zeros(1)},
                  exercises={"train": Exercise(lambda k, inputs, record: None,
                                               expected=lambda inputs: {"accuracy": 0.0},
                                               judge=lambda got, want: None if got["accuracy"] >= 0.7 else "below 70 %",
                                               cells={"test_train_80": tier})})
    judged = {accuracy: judge(probe, {}, {"train/accuracy": np.asarray(accuracy)})["train"]
              for accuracy in (0.75, 0.85, 0.5)}
    assert judged[0.75].ok and judged[0.75].cells == {"test_train_80": "tier needs 80 %, got 75%"}
    assert judged[0.85].ok and judged[0.85].cells == {}
    assert not judged[0.5].ok and judged[0.5].cells == {}  # a failed exercise: its own message says it all
    cells = {gid: {"score": 1.0, "max_score": 1.0} for gid in ("test_train", "test_train_70", "test_train_80")}
    needs = dict.fromkeys(cells, ["train"])
    changed = verify.apply(verify.Verification(verdicts={"train": judged[0.75]}, needs=needs), cells)
    assert changed == ["test_train_80"]
    assert cells["test_train_80"] == {"score": 0.0, "max_score": 1.0, "error": "not scored: tier needs 80 %, got 75%"}
    assert cells["test_train"]["score"] == cells["test_train_70"]["score"] == 1.0
    with pytest.raises(ProbeError, match="cells"):
        Exercise(lambda k, inputs, record: None, cells={"test_x": "not a function"})
