"""Tampering gains nothing: attacks handed in as a student would, graded in one batch.

Every submission is 01's release notebook with `relu` solved (an honest student with that alone
scores `BASELINE`) plus one attack. The attacks that fool nbgrader on its own (their tests run in
the student's kernel) must have those points withdrawn by the trusted run; no attack may score
more than the honest notebook.
"""

from __future__ import annotations

import copy
import html
import json
from pathlib import Path

import nbformat
import pytest

from autograder.batch.grade import grade
from autograder.course.layout import Course
from autograder.course.notebooks import grade_id, is_test, nbgrader, read_notebook
from tests.conftest import feedback_page

pytestmark = pytest.mark.slow
ROOT = Path(__file__).resolve().parents[2]
ASSIGNMENT = "01_numpy_mlp"
BASELINE = 1.0  # test_relu (01's relu carries one point since issue 20)

# Every exercise but relu returns something equal to everything, so that disarmed checks have a
# value to wave through. They go where a student writes answers: the solution cells.
ALWAYS_EQUAL = '''
class AlwaysEqual:
    """Equal to everything."""
    def __eq__(self, other): return True
    def __ne__(self, other): return False
    def __float__(self): return 0.0
'''
FAKE_ANSWERS = {
    "mlp_forward": ALWAYS_EQUAL + "def mlp_forward(x, w1, w2): return AlwaysEqual(), (AlwaysEqual(),) * 3",
    "mlp_backward": "def mlp_backward(x, y, w1, w2, cache): return AlwaysEqual(), AlwaysEqual()",
    "numeric_gradient": "def numeric_gradient(f, w, eps=1e-5): return AlwaysEqual()",
    "train_numpy_mlp": "def train_numpy_mlp(x, y, w1, w2, learning_rate, steps):\n"
                       "    return AlwaysEqual(), AlwaysEqual(), [AlwaysEqual()] * steps",
}

PATCH_CHECKS = '''
import numpy, torch
import helpers.checks
numpy.allclose = lambda *a, **k: True
numpy.testing.assert_allclose = lambda *a, **k: None
torch.allclose = lambda *a, **k: True
torch.testing.assert_close = lambda *a, **k: None
torch.autograd.gradcheck = lambda *a, **k: True
for _name in list(globals()):
    if _name.startswith("check_"):
        globals()[_name] = lambda *a, **k: None
        setattr(helpers.checks, _name, globals()[_name])
'''

AST_HOOK = '''
import ast

class Forgiving(ast.NodeTransformer):
    """assert -> pass, and every cell's body wrapped in try/except BaseException: pass."""
    def visit_Assert(self, node):
        return ast.Pass()
    def visit_Module(self, node):
        self.generic_visit(node)
        handler = ast.ExceptHandler(type=ast.Name("BaseException", ast.Load()), name=None, body=[ast.Pass()])
        node.body = [ast.Try(body=node.body or [ast.Pass()], handlers=[handler], orelse=[], finalbody=[])]
        return ast.fix_missing_locations(node)

get_ipython().ast_transformers.append(Forgiving())
'''

INPUT_HOOK = '''
def blank_tests(lines):
    return [] if any("check_" in line or "assert" in line for line in lines) else lines
get_ipython().input_transformers_cleanup.append(blank_tests)
'''

PRE_RUN_HOOK = '''
def disarm(info):
    namespace = get_ipython().user_ns
    for name in list(namespace):
        if name.startswith("check_"):
            namespace[name] = lambda *a, **k: None
get_ipython().events.register("pre_run_cell", disarm)
'''

# Right answers by means 01 forbids (NumPy only): nbgrader's tests cannot tell.
TORCH_ANSWER = {"numeric_gradient": '''import torch

def numeric_gradient(f, w, eps=1e-5):
    w = torch.tensor(w, dtype=torch.float64)
    grad = torch.zeros_like(w)
    for index in np.ndindex(tuple(w.shape)):
        original = w[index].item()
        w[index] = original + eps
        f_plus = f(w.numpy())
        w[index] = original - eps
        f_minus = f(w.numpy())
        w[index] = original
        grad[index] = (f_plus - f_minus) / (2 * eps)
    return grad.numpy()
'''}
HELPERS_ANSWER = {"mlp_backward": '''import helpers.checks

def mlp_backward(x, y, w1, w2, cache):
    h, h_relu, y_pred = cache
    grad_y_pred = 2.0 * (y_pred - y) * helpers.checks.relative_error_of(1.0, 1.0) + 2.0 * (y_pred - y)
    rows = int(np.prod(x.shape[:-1]))
    grad_h = (grad_y_pred @ w2.T) * (h > 0)
    return (x.reshape(rows, -1).T @ grad_h.reshape(rows, -1),
            h_relu.reshape(rows, -1).T @ grad_y_pred.reshape(rows, -1))
'''}
REFERENCE_ANSWER = {"mlp_forward": '''def mlp_forward(x, w1, w2):
    from helpers.reference.numpy_mlp import mlp_forward as answer
    return answer(x, w1, w2)
'''}

READ_FILES = '''
import glob, os, sqlite3
stolen = []
for pattern in ["{root}/source/*/*.ipynb", "{root}/helpers/reference/*.py", "{root}/build/**/*.db",
                "../../../*.db", "../../../source/*/*.ipynb"]:
    for path in glob.glob(pattern, recursive=True):
        try:
            stolen.append(open(path, errors="replace").read()[:200000])
        except OSError:
            pass
        if path.endswith(".db"):
            try:
                db = sqlite3.connect(path)
                db.execute("update grade set manual_score = 100")
                db.commit()
            except Exception:
                pass
print("\\n".join(stolen))
'''


def attacks() -> dict[str, object]:
    """student id -> a function (release notebook with relu solved) -> the notebook handed in."""

    def added(code, answers=FAKE_ANSWERS):
        def make(nb):
            for cell in nb.cells:
                if grade_id(cell) in answers:
                    cell.source = answers[grade_id(cell)]
            if code:
                nb.cells.insert(1, nbformat.v4.new_code_cell(code))
            return nb
        return make

    def tests_edited(edit):
        def make(nb):
            for cell in list(nb.cells):
                if is_test(cell) and grade_id(cell) != "test_relu":
                    edit(nb, cell)
            return added("")(nb)
        return make

    def delete(nb, cell):
        nb.cells.remove(cell)

    def empty(nb, cell):
        cell.source = ""

    def weaken(nb, cell):
        cell.source = "pass"

    def duplicate(nb, cell):
        nb.cells.insert(nb.cells.index(cell), copy.deepcopy(cell))

    def strip(nb, cell):
        cell.metadata.pop("nbgrader", None)
        cell.source = "pass"

    return {
        "honest": lambda nb: nb,
        "patched_checks": added(PATCH_CHECKS),
        "always_equal": added(""),
        "ast_transformer": added(AST_HOOK),
        "input_transformer": added(INPUT_HOOK),
        "pre_run_cell": added(PRE_RUN_HOOK),
        "tests_deleted": tests_edited(delete),
        "tests_emptied": tests_edited(empty),
        "tests_edited": tests_edited(weaken),
        "tests_duplicated": tests_edited(duplicate),
        "tests_metadata_stripped": tests_edited(strip),
        "numpy_by_torch": added("", TORCH_ANSWER),
        "numpy_by_helpers": added("", HELPERS_ANSWER),
        "numpy_by_reference": added("", REFERENCE_ANSWER),
        "reads_course_files": added(READ_FILES.format(root=ROOT)),
        "prints_hidden_tests": added("get_ipython().events.register('pre_run_cell', "
                                     "lambda info: print(info.raw_cell))"),
    }


# nbgrader alone gives these attacks points (checked by hand on nbgrader 0.9.6): the trusted run must
# withdraw them, which the result says.
FOOLS_NBGRADER = ("patched_checks", "ast_transformer", "input_transformer", "pre_run_cell", "numpy_by_torch",
                  "numpy_by_helpers")


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    """Grade every attack in one batch; returns {student: record of grades.json}, out dir."""
    course = Course(ROOT)
    source = read_notebook(course.source_notebook(ASSIGNMENT))
    release = read_notebook(course.release_notebook(ASSIGNMENT))
    relu_answer = next(c.source for c in source.cells if grade_id(c) == "relu")
    root = tmp_path_factory.mktemp("submitted")
    for student, make in attacks().items():
        nb = copy.deepcopy(release)
        for cell in nb.cells:
            if grade_id(cell) == "relu":
                cell.source = relu_answer
        path = root / student / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
        path.parent.mkdir(parents=True)
        nbformat.write(make(nb), path)
    out = tmp_path_factory.mktemp("graded")
    grade(course, root, out, [ASSIGNMENT], n_jobs=2)
    records = json.loads((out / "grades.json").read_text())
    return {r["student_id"]: r for r in records}, out


def test_the_honest_baseline_scores_relu_only(graded):
    records, _ = graded
    assert records["honest"]["status"] == "graded"
    assert records["honest"]["score"] == BASELINE
    assert records["honest"]["verification"]["relu"] == "passed"


@pytest.mark.parametrize("student", [s for s in attacks() if s != "honest"])
def test_an_attack_scores_no_more_than_the_honest_notebook(graded, student):
    records, _ = graded
    record = records[student]
    assert record["status"] == "graded", record["reason"]
    assert record["score"] <= BASELINE, (student, record["score"], record["cells"])


@pytest.mark.parametrize("student", FOOLS_NBGRADER)
def test_points_nbgrader_gave_to_an_attack_are_withdrawn(graded, student):
    records, _ = graded
    warnings = " ".join(records[student]["warnings"])
    assert "points withdrawn" in warnings, records[student]


@pytest.mark.parametrize("student, exercise, words", [
    ("numpy_by_torch", "numeric_gradient", "torch"),
    ("numpy_by_helpers", "mlp_backward", "helpers"),
    ("numpy_by_reference", "mlp_forward", "helpers.reference"),
])
def test_solving_numpy_by_other_means_is_reported_in_the_feedback(graded, student, exercise, words):
    records, out = graded
    assert words in records[student]["verification"][exercise]
    feedback = feedback_page(out, Course(ROOT), student, ASSIGNMENT)
    assert "Checked outside your notebook" in feedback and words in feedback


@pytest.mark.parametrize("student", ["reads_course_files", "prints_hidden_tests"])
def test_hidden_tests_and_answers_stay_out_of_the_feedback(graded, student):
    records, out = graded
    assert records[student]["score"] <= BASELINE
    feedback = feedback_page(out, Course(ROOT), student, ASSIGNMENT)
    feedback = html.unescape(feedback)
    source = read_notebook(Course(ROOT).source_notebook(ASSIGNMENT))
    hidden_cells = [c.source for c in source.cells if is_test(c) and "BEGIN HIDDEN" in c.source]
    elsewhere = {line.strip() for c in source.cells if c.source not in hidden_cells
                 for line in c.source.splitlines()}
    hidden = {line.strip() for text in hidden_cells for line in text.splitlines()[2:-1]
              if len(line.strip()) > 30 and line.strip() not in elsewhere}
    assert len(hidden) > 20 and not [line for line in hidden if line in feedback]
    assert "BEGIN HIDDEN TESTS" not in feedback and "def relu(h: np.ndarray)" not in feedback


def test_every_test_cell_is_scored_from_the_source_version(graded):
    """Deleted, emptied, edited, duplicated or stripped tests: each source test cell has its score."""
    records, _ = graded
    source = read_notebook(Course(ROOT).source_notebook(ASSIGNMENT))
    tests = {grade_id(c) for c in source.cells if is_test(c) and nbgrader(c).get("points")}
    for student in ("tests_deleted", "tests_emptied", "tests_edited", "tests_duplicated",
                    "tests_metadata_stripped"):
        assert set(records[student]["cells"]) == tests
        assert records[student]["cells"]["test_relu"]["score"] == 1
