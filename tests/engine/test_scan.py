"""The static scan (autograder/engine/scan.py): tampering is named, right answers in any style are not.

Each right answer below is written the way a student might, in the solution cell of the real
source notebook; `verify.scan_failures` is what withdraws points, so it is what is asked.
"""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest

from autograder.authoring import check
from autograder.course import exercises
from autograder.course.grading_folder import probe_for
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
    "through __dict__": ("np.__dict__['allclose'] = print", "np.__dict__[...] = ..."),
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
    # A cell magic's body is code the kernel runs (issue 37, finding 4): read as code, whatever the magic
    "the body of %%time": ("%%time\nimport ctypes", "ctypes"),
    "the body of %%capture": ("%%capture\nnp.allclose = lambda *a, **k: True", "np.allclose = ..."),
    "the body of %%timeit": ("%%timeit -n1 -r1\nexec('x = 1')", "exec"),
    "the setup line of %%timeit": ("%%timeit import ctypes\npass", "ctypes"),
    "the body of an unknown cell magic": ("%%prun_everything\ntorch.testing.assert_close = print",
                                          "torch.testing.assert_close = ..."),
    "nested cell magics": ("%%capture out\n%%time\nsetattr(np, 'allclose', print)", "setattr(np"),
    "after blank lines": ("\n\n%%time\ndel torch.testing", "del torch.testing"),
    "the code of a line magic": ("%time exec('x = 1')", "exec"),
    "the code of %timeit with options": ("%timeit -n1 -r1 np.__dict__.update(allclose=print)", "np.__dict__"),
    "the code of a line magic in an assignment": ("t = %time exec('x = 1')", "exec"),
    # magics that run another file or hand over IPython's hooks
    "%run": ("%run /elsewhere/helpers/reference/optim.py", "%run"),
    "%run by automagic": ("run /elsewhere/helpers/reference/optim.py", "%run"),
    "%load_ext": ("%load_ext my_hooks", "%load_ext"),
    "%%code_wrap": ("%%code_wrap\ntry:\n    __code__\nexcept Exception:\n    pass", "%%code_wrap"),
    "%autocall": ("%autocall 2", "%autocall"),
    # writes into an imported object's __dict__, however reached
    "__dict__.update": ("np.__dict__.update(allclose=lambda *a, **k: True)", "np.__dict__"),
    "__dict__ kept in a name": ("d = torch.testing.__dict__\nd['assert_close'] = print", "torch.testing.__dict__"),
    "vars().update": ("vars(torch).update(allclose=print)", "vars(torch"),
    "__setattr__ of a module": ("np.__setattr__('allclose', print)", "np.__setattr__"),
    "object.__setattr__ on a module": ("object.__setattr__(np, 'allclose', print)", "object.__setattr__(np"),
    # writes through a name that stands for an imported object
    "a function's argument": ("def f(m):\n    m.allclose = lambda *a, **k: True\n\n\nf(np)", "f(np)"),
    "a function's keyword argument": ("def f(x, m=None):\n    m.assert_close = print\n\n\nf(1, m=torch.testing)",
                                      "f(1, m=torch.testing)"),
    "an item through an argument": ("def f(d):\n    d[0] = print\n\n\nf(torch.nn.modules.module._global_forward_hooks)",
                                    "f(torch.nn.modules.module._global_forward_hooks)"),
    "setattr on an argument": ("def f(m, name):\n    setattr(m, name, print)\n\n\nf(np, 'allclose')", "f(np, 'allclose')"),
    "a lambda's argument": ("(lambda m: setattr(m, 'allclose', print))(np)", "(np)"),
    "a class's argument": ("class Patch:\n    def __init__(self, m):\n        m.allclose = print\n\n\nPatch(np)",
                           "Patch(np)"),
    "a function handed to map": ("def f(m):\n    m.allclose = print\n\n\nlist(map(f, [np, torch]))", "map(f"),
    "a function renamed": ("def f(m):\n    m.allclose = print\n\n\ng = f\ng(np)", "g(np)"),
    "a module renamed": ("m = np\nm.allclose = lambda *a, **k: True", "m.allclose = ..."),
    "modules in a loop": ("for m in (np, torch):\n    m.allclose = print", "m.allclose = ..."),
    # IPython's hooks through the module, not the builtin
    "IPython.get_ipython": ("import IPython\nIPython.get_ipython().events.register('pre_run_cell', print)", "IPython"),
    "get_ipython imported": ("from IPython import get_ipython as shell\nshell().ast_transformers.append(0)",
                             "get_ipython"),
    "the shell's class": ("from IPython.core.interactiveshell import InteractiveShell\nInteractiveShell.instance()",
                          "IPython"),
    "the kernel's": ("import ipykernel.kernelapp as app\napp.IPKernelApp.instance().shell", "ipykernel"),
    "get_ipython through another module": ("helpers.setup.get_ipython()", "get_ipython"),
    # running another file, or code from a string, without exec
    "runpy": ("import runpy\nrunpy.run_path('/elsewhere/helpers/reference/optim.py')", "runpy"),
    "run_path imported": ("from runpy import run_path\nrun_path('/elsewhere/helpers/reference/optim.py')", "runpy"),
    "code": ("import code\ncode.InteractiveInterpreter().runsource('x = 1')", "code"),
    "codeop": ("import codeop\nf = codeop.compile_command('x = 1')", "codeop"),
    "imp": ("import imp", "imp"),
    "pkgutil": ("import pkgutil\nm = pkgutil.resolve_name('helpers.checks')", "pkgutil"),
    "zipimport": ("import zipimport", "zipimport"),
    "marshal": ("import marshal", "marshal"),
    "runpy by __import__": ("m = __import__('runpy')", "runpy"),
    # what is flagged by name, reached as an attribute of another module
    "sys.modules through os": ("import os\nos.sys.modules['numpy'].allclose = print", "sys.modules"),
    "__builtins__ through a module": ("np.__builtins__['exec']('x = 1')", "__builtins__"),
    "a check's globals": ("g = check_close.__globals__\ng['np'] = None", "__globals__"),
    "a frame's globals": ("import sys\nsys._getframe().f_globals['check_close'] = print", "f_globals"),
    "the namespace by vars()": ("vars()['check_close'] = print", "vars()"),
    "the namespace by locals()": ("locals()['check_close'] = print", "locals"),
    "another folder on the path": ("import sys\nsys.path.insert(0, '/elsewhere/helpers/reference')\nimport optim",
                                   "sys.path"),
    "a module's loader": ("np.__loader__.load_module('optim')", "__loader__"),
    "every class": ("().__class__.__base__.__subclasses__()", "__subclasses__"),
    # switching off the trusted run's watches (a backward asking autograd under them, 03/04's given.py)
    "function modes off": ("with torch._C.DisableTorchFunction():\n    g = torch.autograd.grad(y, x, v)",
                           "DisableTorchFunction"),
    "dispatch modes off": ("from torch.utils._python_dispatch import _disable_current_modes\n"
                           "with _disable_current_modes():\n    g = torch.ops.aten.sigmoid_backward(v, y)",
                           "_disable_current_modes"),
    "saved-tensor hooks off": ("with torch.autograd.graph.disable_saved_tensors_hooks('mine'):\n    pass",
                               "disable_saved_tensors_hooks"),
    "dispatch off, C side": ("guard = torch._C._DisableTorchDispatch()", "_DisableTorchDispatch"),
    "a mode popped": ("from torch.overrides import _pop_mode_temporarily\nwith _pop_mode_temporarily():\n    pass",
                      "_pop_mode_temporarily"),
    "autograd's engine called by hand": ("torch.autograd.Variable._execution_engine.run_backward((y,), (g,), False, "
                                         "False, (x,), False)", "_execution_engine"),
    "Python's dispatch keys excluded": ("with torch._C._ExcludeDispatchKeyGuard(keys):\n    y = table[x]",
                                        "_ExcludeDispatchKeyGuard"),
    # what the scan cannot read is not trusted
    "cell magics nested past what is read": ("%%capture\n" * 9 + "import ctypes", "nested more than"),
    "nested deeper than this process parses": ("x = " + " if c else ".join(["np"] * 3000), "too deep"),
    "a module hidden among settings": ("for m in (" + "".join(f"torch.backends.b{i}, " for i in range(40))
                                       + "np):\n    m.allclose = print", "m.allclose = ..."),
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
cudnn = torch.backends.cudnn  # settings, through another name
cudnn.deterministic = True


def count_parameters(model):
    return sum(getattr(p, "numel")() for p in model.parameters() if p.requires_grad)
''',
    # a check the setup imported from helpers, called by the student: 01 forbids naming helpers, not this
    ("01_numpy_mlp", "mlp_backward"): '''def mlp_backward(x, y, w1, w2, cache):
    h, h_relu, y_pred = cache
    grad_h = (2.0 * (y_pred - y) @ w2.T) * (h > 0)
    return x.T @ grad_h, h_relu.T @ (2.0 * (y_pred - y))


check_close(mlp_backward(np.eye(2), np.zeros((2, 1)), np.eye(2), np.ones((2, 1)),
                         (np.eye(2), np.eye(2), np.ones((2, 1))))[1], 2.0 * np.ones((2, 1)), "grad_w2")
''',
    # IPython's syntax around a right answer: read as the kernel runs it, and nothing in it is tampering
    ("01_numpy_mlp", "train_numpy_mlp"): '''%%time
from IPython.display import clear_output


def train_numpy_mlp(x, y, w1, w2, learning_rate, steps):
    losses = []
    for _ in range(steps):
        y_pred, cache = mlp_forward(x, w1, w2)
        losses.append(float(l2_loss(y_pred, y)))
        grad_w1, grad_w2 = mlp_backward(x, y, w1, w2, cache)
        w1, w2 = w1 - learning_rate * grad_w1, w2 - learning_rate * grad_w2
    clear_output(wait=True)
    return w1, w2, losses


%time _ = train_numpy_mlp(np.ones((2, 3)), np.ones((2, 1)), np.ones((3, 4)), np.ones((4, 1)), 0.1, 2)
%timeit -n1 -r1 train_numpy_mlp(np.ones((2, 3)), np.ones((2, 1)), np.ones((3, 4)), np.ones((4, 1)), 0.1, 2)
%matplotlib inline
%config InlineBackend.figure_format = "retina"
%load_ext autoreload
%autoreload 2
!ls
''',
    # a helper that writes through its parameter, given what the model holds; classes named, never changed
    ("06_data_loading", "init_classifier"): '''import math

LINEAR = nn.Linear  # read, never written
code = "kaiming"  # a name of the student's own, not the module `code`


def _reset(layer, std):
    layer.weight.data = torch.randn_like(layer.weight) * std
    layer.bias.data[:] = 0
    setattr(layer, "initialized_by", code)


def init_classifier(model, last_scale=0.01):
    for layer in (LINEAR, nn.Linear):  # classes, only read; `layer` is the model's own in the next loop
        assert isinstance(layer, type)
    linears = [m for m in model.modules() if isinstance(m, (LINEAR, nn.Linear))]
    for i, layer in enumerate(linears):
        _reset(layer, math.sqrt(2.0 / layer.in_features) * (last_scale if i == len(linears) - 1 else 1.0))
        layer.bias.requires_grad = True
    return model
''',
    # the optimizer's own __dict__ and vars(), its base class's __init__ called by name
    ("05_optim", "SGDMomentum"): '''class SGDMomentum(torch.optim.Optimizer):
    def __init__(self, params, lr, momentum=0.9):
        if lr < 0.0 or momentum < 0.0:
            raise ValueError(f"invalid learning rate {lr} or momentum {momentum}: both must be >= 0")
        torch.optim.Optimizer.__init__(self, params, dict(lr=lr, momentum=momentum))
        self.__dict__.setdefault("steps_taken", 0)

    @torch.no_grad()
    def step(self, closure=None):
        loss = None
        if closure is not None:
            with torch.enable_grad():
                loss = closure()
        vars(self)["steps_taken"] += 1
        for group in self.param_groups:
            lr, momentum = group["lr"], group["momentum"]
            for p in filter(lambda q: q.grad is not None, group["params"]):
                buffer = self.state[p].get("momentum_buffer")
                if buffer is None:
                    self.state[p]["momentum_buffer"] = buffer = p.grad.detach().clone()
                else:
                    buffer.mul_(momentum).add_(p.grad)
                p.sub_(lr * buffer)
        return loss
''',
    ("04_nn_modules", "ParallelBlock"): '''class ParallelBlock(nn.Module):
    def __init__(self, d_in, d_out):
        nn.Module.__init__(self)
        for name in ("linear1", "linear2"):
            self.__setattr__(name, nn.Linear(d_in, d_out))

    def forward(self, x):
        return torch.mul(self.linear1(x), self.linear2(x)).clamp(min=0)
''',
    ("02_autograd", "to_numpy"): '''def to_numpy(t):
    try:
        return t.detach().cpu().numpy()
    except RuntimeError as error:  # an attribute named like a module is not the module
        raise ValueError(getattr(error, "code", None)) from error
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


def test_a_write_through_an_argument_is_seen_across_cells():
    """The helper defined in a cell the student added, called on a module in a solution cell."""
    source = read_notebook(Course(ROOT).source_notebook("04_nn_modules"))
    submitted = source.copy()
    submitted.cells = [c.copy() for c in source.cells]
    helper = nbformat.v4.new_code_cell("def quiet(m):\n    m.assert_close = lambda *a, **k: None\n")
    for index, cell in enumerate(submitted.cells):
        if cell.get("metadata", {}).get("nbgrader", {}).get("grade_id") == "TwoLayerNet":
            cell.source += "\nquiet(torch.testing)\n"
            submitted.cells.insert(index, helper)
            break
    solutions = exercises.read(source).solutions()
    cells, _ = verify.student_code(submitted, source)
    failures, notes = verify.scan_failures(cells, solutions, ())
    assert set(failures) == {"TwoLayerNet"}, failures
    assert any(note.startswith("the cell of TwoLayerNet") and "quiet(torch.testing), a write to torch.testing" in note
               for note in notes), notes
    assert any(note.startswith("a cell you added") and "m.assert_close = ..." in note for note in notes), notes


@pytest.mark.parametrize("assignment", Course(ROOT).assignments())
def test_every_solution_and_every_right_answer_of_the_grading_folder_is_unflagged(assignment):
    """Habit 15: the source's solution cells, and each variant in its solution cell as `check` grades it."""
    course = Course(ROOT)
    source = read_notebook(course.source_notebook(assignment))
    model = exercises.read(source)
    probe = probe_for(assignment, course.root)
    for group in [[], *check.sample_groups(course, assignment, "variants", model)]:
        cells, _ = verify.student_code(check.with_samples(source, model, group), source)
        failures, notes = verify.scan_failures(cells, model.solutions(), probe.forbidden)
        assert failures == {} and notes == [], ([sample.path.name for sample in group], notes)
