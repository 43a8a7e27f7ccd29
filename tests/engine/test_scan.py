"""The static scan (autograder/engine/scan.py): tampering is named, right answers in any style are not.

Each right answer below is written the way a student might, in the solution cell of the real
source notebook; `verify.scan_failures` is what withdraws points, so it is what is asked.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from autograder.course import exercises
from autograder.course.layout import Course
from autograder.course.notebooks import read_notebook
from autograder.engine import scan, verify

ROOT = Path(__file__).resolve().parents[2]
SETUP_IMPORTS = {"np", "torch", "nn", "F", "plt", "helpers", "check_close", "check_equal"}

TAMPERING = {
    "setattr on a module": ("import torch\nsetattr(torch, 'allclose', lambda *a, **k: True)", "setattr(torch"),
    "setattr on the checks": ("import helpers.checks\nsetattr(helpers.checks, 'check_close', print)",
                              "setattr(helpers.checks"),
    "a builtin rebound": ("import builtins\nbuiltins.abs = lambda x: 0", "builtins"),
    "__builtins__": ("__builtins__['len'] = lambda x: 0", "__builtins__"),
    "a NumPy function rebound": ("np.allclose = lambda *a, **k: True", "np.allclose = ..."),
    "a nested one": ("import numpy\nnumpy.testing.assert_allclose = lambda *a, **k: None", "numpy.testing.assert_allclose"),
    "deleted": ("del torch.testing", "del torch.testing"),
    "through vars": ("vars(np)['allclose'] = print", "vars(np"),
    "through __dict__": ("np.__dict__['allclose'] = print", "np.__dict__ = ..."),
    "exec": ("exec('x = 1')", "exec"),
    "eval": ("y = eval('1 + 1')", "eval"),
    "eval aliased": ("run = eval\nrun('1')", "eval"),
    "compile": ("code = compile('x', 'f', 'exec')", "compile"),
    "__import__": ("m = __import__('os')", "__import__"),
    "importlib": ("import importlib\nimportlib.reload(np)", "importlib"),
    "get_ipython": ("get_ipython().ast_transformers.append(object())", "get_ipython"),
    "globals": ("globals()['check_close'] = print", "globals"),
    "sys.modules": ("import sys\nsys.modules['numpy'].allclose = print", "sys.modules"),
    "sys.modules by getattr": ("import sys\nm = getattr(sys, 'modules')", "sys.modules"),
    "a check rebound": ("check_close = lambda *a, **k: None", "check_close = ..."),
    "a check redefined": ("def check_equal(*a, **k):\n    pass", "check_equal = ..."),
    "ctypes": ("import ctypes", "ctypes"),
    "open": ("text = open('/etc/hostname').read()", "open"),
    "the reference": ("from helpers.reference import nn_modules", "helpers.reference"),
    "the reference by getattr": ("import helpers\nr = getattr(helpers, 'reference')", "helpers.reference"),
    # IPython syntax in a line of the cell does not blind the scan to the rest of it
    "ctypes after a shell escape": ("_x = !true\nimport ctypes", "ctypes"),
    "exec in a cell magic's neighbour": ("%time y = 1\nexec('x = 1')", "exec"),
    "get_ipython beside a magic": ("%matplotlib inline\nget_ipython().events.register('pre_run_cell', print)",
                                   "get_ipython"),
}


@pytest.mark.parametrize("name", TAMPERING)
def test_tampering_is_named(name):
    code, what = TAMPERING[name]
    found = scan.findings(code, modules=SETUP_IMPORTS, checks={"check_close", "check_equal"})
    assert any(what in f for f in found), found


# Right answers (or right code around them) that an older scan rejected or could have.
RIGHT = {
    ("04_nn_modules", "TwoLayerNet"): '''class TwoLayerNet(nn.Module):
    def __init__(self, d_in, h, d_out):
        super().__init__()
        for i, (a, b) in enumerate([(d_in, h), (h, d_out)], start=1):
            setattr(self, f"linear{i}", nn.Linear(a, b))

    def forward(self, x):
        return getattr(self, "linear2")(getattr(self, "linear1")(x).clamp(min=0))
''',
    ("04_nn_modules", "LinearRegression"): '''class LinearRegression(nn.Module):
    def __init__(self, d):
        super().__init__()
        for name, shape in (("w", (1, d)), ("b", (1,))):
            setattr(self, name, nn.Parameter(torch.zeros(*shape)))

    def forward(self, x):
        return x @ self.w.T + self.b
''',
    ("04_nn_modules", "train_manual_sgd"): '''def train_manual_sgd(model, x, y, learning_rate, steps):
    losses = []
    for phase in ("train", "eval") * 0:
        pass
    model.train()
    for _ in range(steps):
        loss = ((model(x) - y) ** 2).sum()
        model.zero_grad()
        loss.backward()
        with torch.no_grad():
            for p in model.parameters():
                p -= learning_rate * p.grad
        losses.append(loss.item())
    model.eval()
    return losses
''',
    ("01_numpy_mlp", "relu"): '''import re

PATTERN = re.compile(r"eval|exec|open")  # words in strings are not calls


def relu(h):
    """Not eval(h), nor open: np.maximum."""
    return np.maximum(h, 0)
''',
    ("01_numpy_mlp", "mlp_forward"): '''def compile(x, w):  # a name of the student's own
    return x @ w


def mlp_forward(x, w1, w2):
    h = compile(x, w1)
    h_relu = relu(h)
    y_pred = compile(h_relu, w2)
    return y_pred, (h, h_relu, y_pred)
''',
    ("01_numpy_mlp", "numeric_gradient"): '''def numeric_gradient(f, w, eps=1e-5):
    settings = {"open": 1, "exec": 2}
    w = np.array(w, dtype=np.float64)
    grad = np.zeros_like(w)
    for index in np.ndindex(w.shape):
        original = w[index]
        w[index] = original + eps * settings["open"]
        f_plus = f(w)
        w[index] = original - eps
        f_minus = f(w)
        w[index] = original
        grad[index] = (f_plus - f_minus) / (2 * eps)
    return grad
''',
    ("04_nn_modules", "count_parameters"): '''plt.rcParams["figure.figsize"] = (6, 4)
torch.backends.cudnn.benchmark = True


def count_parameters(model):
    return sum(getattr(p, "numel")() for p in model.parameters() if p.requires_grad)
''',
}


@pytest.mark.parametrize("assignment, exercise", list(RIGHT))
def test_a_right_answer_in_another_style_loses_nothing(assignment, exercise):
    source = read_notebook(Course(ROOT).source_notebook(assignment))
    submitted = source.copy()
    submitted.cells = [c.copy() for c in source.cells]
    for cell in submitted.cells:
        if cell.get("metadata", {}).get("nbgrader", {}).get("grade_id") == exercise:
            cell.source = RIGHT[assignment, exercise]
    solutions = exercises.read(source).solutions()
    cells, _ = verify.student_code(submitted, source)
    failures, notes = verify.scan_failures(cells, solutions, ("torch", "helpers") if assignment == "01_numpy_mlp" else ())
    assert failures == {} and notes == [], (failures, notes)


def test_tampering_in_a_solution_cell_fails_its_exercise():
    source = read_notebook(Course(ROOT).source_notebook("04_nn_modules"))
    submitted = source.copy()
    submitted.cells = [c.copy() for c in source.cells]
    for cell in submitted.cells:
        if cell.get("metadata", {}).get("nbgrader", {}).get("grade_id") == "TwoLayerNet":
            cell.source += "\nsetattr(torch.testing, 'assert_close', lambda *a, **k: None)\n"
    solutions = exercises.read(source).solutions()
    cells, _ = verify.student_code(submitted, source)
    failures, _ = verify.scan_failures(cells, solutions, ())
    assert set(failures) == {"TwoLayerNet"} and "setattr(torch.testing" in failures["TwoLayerNet"]


def test_magics_and_shell_escapes_are_no_finding_by_themselves():
    """IPython syntax read as the kernel runs it: the calls it makes are not the student's get_ipython."""
    code = "%timeit y = 1\nfiles = !ls\n%matplotlib inline\nimport numpy as np\nz = np.zeros(3)"
    assert scan.findings(code, modules=SETUP_IMPORTS) == []
