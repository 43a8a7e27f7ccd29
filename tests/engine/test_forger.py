"""The generic forger gains nothing (issue 37, finding 1; threat model: "the kernel is not a witness").

A student cell that (1) wraps every later cell in try/except and turns assert into pass, so that
nbgrader's tests raise nothing, and (2) rewrites whatever the trusted run runs in the kernel so that it
hands back what the grader would accept, computed from what the kernel was handed:
- against the old kernel side (autograder/probes/kernel.py, which ran the probe's own source in the
  kernel): every exercise records its probe's `expected` values and every boolean as True;
- against the fixed caller (autograder/probes/caller.py): every value a student's call failed to give is
  replaced by the first array the grader sent, every boolean handed back by True.
Graded as a student's notebook, on every assignment's untouched release, it must earn exactly what the
untouched release earns (0); on wrong answers, exactly what they earn without it. Measured before the
fix (the old kernel side): untouched 02 4/26, 04 7/25 (conv2d forward and backward), 08 4/34.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

import nbformat
import pytest

from autograder.batch.grade import grade
from autograder.course.layout import Course
from autograder.course.notebooks import grade_id, read_notebook
from tests.engine.test_tampering import AST_HOOK

pytestmark = pytest.mark.slow
ROOT = Path(__file__).resolve().parents[2]
COURSE = Course(ROOT)

# AST_HOOK: assert -> pass, and every later cell inside try/except BaseException
FORGER = AST_HOOK + r'''
import dataclasses, json
import numpy as np

def _forge(value):
    if isinstance(value, bool):
        return True
    if isinstance(value, list):
        return [_forge(v) for v in value]
    if isinstance(value, dict) and "tuple" in value:
        return {"tuple": [_forge(v) for v in value["tuple"]]}
    return value

try:  # the old kernel side: the probe's own source ran here, expected values and all
    import autograder.probes.kernel as _old
    _load = _old.load_module
    def _forged_load(source, name):
        module = _load(source, name)
        probe = module.PROBE
        forged = {}
        for exercise_name, exercise in probe.exercises.items():
            def run(answers, inputs, record, exercise=exercise):
                real = {}
                try:
                    exercise.run(answers, inputs, lambda k, v: real.__setitem__(k, v))
                except BaseException:
                    pass
                for k, v in real.items():
                    record(k, True if isinstance(v, (bool, np.bool_)) else v)
                if exercise.expected is not None:
                    try:
                        for k, v in exercise.expected(dict(inputs)).items():
                            record(k, v)
                    except BaseException:
                        pass
            forged[exercise_name] = dataclasses.replace(exercise, run=run)
        object.__setattr__(probe, "exercises", forged)
        return module
    _old.load_module = _forged_load
except Exception:
    pass

try:  # the fixed caller: forge what comes back
    from autograder.probes import caller as _caller
    _run = _caller.Caller.run
    def _forged_run(self, ops):
        results, stopped = _run(self, ops)
        sent = [op[2] for op in ops if op[0] == "value" and isinstance(op[2], dict) and "nd" in op[2]]
        forged = []
        for result in results:
            if isinstance(result, dict) and set(result) == {"error"} and sent:
                result = sent[0]
            forged.append(_forge(result))
        return forged, None
    _caller.Caller.run = _forged_run
except Exception:
    pass
'''

WRONG_06 = {  # two wrong answers the old forger rescued: 06 scored 22/22 with them
    "init_classifier": "def init_classifier(model, last_scale=0.01):\n    return model\n",
    "make_loaders": ("def make_loaders(dataset, batch_size, val_fraction, seed):\n"
                     "    loader = torch.utils.data.DataLoader(dataset, batch_size=batch_size)\n"
                     "    return loader, loader\n"),
}


def notebooks() -> dict[tuple[str, str], nbformat.NotebookNode]:
    """(student, assignment) -> notebook: every untouched release with the forger; 06's solution with
    two wrong answers, with and without it."""
    made = {}
    for assignment in COURSE.assignments():
        release = read_notebook(COURSE.release_notebook(assignment))
        made[("forger", assignment)] = with_forger(release)
    source = read_notebook(COURSE.source_notebook("06_data_loading"))
    wrong = copy.deepcopy(source)
    for cell in wrong.cells:
        if grade_id(cell) in WRONG_06:
            cell.source = WRONG_06[grade_id(cell)]
    made[("wrong", "06_data_loading")] = wrong
    made[("wrong_forger", "06_data_loading")] = with_forger(wrong)
    return made


def with_forger(nb):
    nb = copy.deepcopy(nb)
    nb.cells.insert(1, nbformat.v4.new_code_cell(FORGER))
    return nb


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    root = tmp_path_factory.mktemp("submitted")
    for (student, assignment), nb in notebooks().items():
        path = root / student / assignment / f"{assignment}.ipynb"
        path.parent.mkdir(parents=True, exist_ok=True)
        nbformat.write(nb, path)
    out = tmp_path_factory.mktemp("graded")
    grade(COURSE, root, out, COURSE.assignments(), n_jobs=2)
    records = json.loads((out / "grades.json").read_text())
    return {(r["student_id"], r["assignment"]): r for r in records}


@pytest.mark.parametrize("assignment", COURSE.assignments())
def test_the_forger_earns_nothing_on_an_untouched_release(graded, assignment):
    record = graded[("forger", assignment)]
    assert record["status"] == "graded", record["reason"]
    passed = [name for name, verdict in record["verification"].items() if verdict == "passed"]
    assert record["score"] == 0, (record["score"], passed, record["cells"])
    assert passed == []


def test_the_forger_rescues_no_wrong_answer(graded):
    plain, forged = graded[("wrong", "06_data_loading")], graded[("wrong_forger", "06_data_loading")]
    assert plain["status"] == forged["status"] == "graded"
    assert plain["score"] < plain["max_score"], plain["cells"]
    assert forged["score"] <= plain["score"], (forged["score"], plain["score"], forged["verification"])
    for exercise in WRONG_06:
        assert forged["verification"][exercise] != "passed", forged["verification"][exercise]
