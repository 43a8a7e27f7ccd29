"""Stand-ins shared by the grading folders' given.py: they swap a function's globals for a while and hand
back what the student's objects gave, as plain values."""

from __future__ import annotations

import numpy as np
import pytest

from autograder.probes.stand_ins import StandIn, floats, listed, type_names

helper = "the student's own"


def uses_helper():
    return helper


def test_a_stand_in_replaces_the_globals_a_function_reads_then_puts_them_back():
    with StandIn(uses_helper, {"helper": "the grader's", "added": 1}):
        assert uses_helper() == "the grader's"
        assert uses_helper.__globals__["added"] == 1
    assert uses_helper() == "the student's own"
    assert "added" not in uses_helper.__globals__  # a name that was not there is gone again


def test_the_globals_come_back_when_the_students_code_raises():
    with pytest.raises(ZeroDivisionError):
        with StandIn(uses_helper, {"helper": "the grader's"}):
            raise ZeroDivisionError("the student's code failed")
    assert uses_helper() == "the student's own"


def test_returned_values_as_plain_floats_names_and_lists():
    torch = pytest.importorskip("torch")
    values = (torch.tensor(1.5, requires_grad=True), np.float32(2.0), 3)
    assert floats(values) == [1.5, 2.0, 3.0]
    assert type_names(values) == ["Tensor", "float32", "int"]
    assert listed(v for v in (1, 2)) == [1, 2] and listed((3,)) == [3]


def test_importing_the_stand_ins_imports_no_pytorch():
    """01's kernels import this module (through given.py) and must never import PyTorch: the watches import it
    when first used."""
    import subprocess
    import sys

    code = "import sys, autograder.probes.stand_ins; print('torch' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip() == "False"


def test_watched_hands_back_what_a_call_returned_ran_and_asked():
    torch = pytest.importorskip("torch")
    from autograder.probes.stand_ins import watched

    x, w = torch.ones(4, 3, dtype=torch.float64), torch.ones(3, 5, dtype=torch.float64)
    derived = watched(lambda a, b: a @ b, x, w)
    assert derived["raised"] is None and derived["returned"].shape == (4, 5)
    assert "matmul" in derived["calls"] and "mm" in derived["aten"] and derived["flops"] == 2 * 4 * 3 * 5

    def asks(a):  # a backward that builds a graph of its own to ask autograd
        with torch.enable_grad():
            a = a.detach().requires_grad_(True)
            return torch.autograd.grad(torch.sigmoid(a).sum(), a)[0]

    asked = watched(asks, x)
    assert asked["returned"] is None and asked["raised"].startswith("AskedAutograd")
    assert torch.is_grad_enabled()  # grad mode off only while the call ran


def test_watched_sees_a_graph_built_under_saved_tensor_hooks_of_the_calls_own():
    """The innermost saved-tensor hooks win: a call that pushes its own (identity) hooks, switches grad mode on and
    runs autograd's engine directly (no autograd.grad to name) is refused nothing and names no gradient function;
    the operators it ran on tensors that require a gradient, with grad mode on, give it away (before: no record)."""
    torch = pytest.importorskip("torch")
    from torch.autograd import Variable

    from autograder.probes.stand_ins import watched

    def asks_the_engine(x, grad):
        with torch.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t), torch.enable_grad():
            a = x.detach().requires_grad_(True)
            y = 1 / (1 + torch.exp(-a))  # no operator named for a backward pass
            return Variable._execution_engine.run_backward((y,), (grad,), False, False, (a,), False, False)[0]

    x, grad = torch.randn(5, dtype=torch.float64), torch.randn(5, dtype=torch.float64)
    asked = watched(asks_the_engine, x, grad)
    assert asked["raised"] is None and torch.allclose(asked["returned"], torch.sigmoid(x) * (1 - torch.sigmoid(x)) * grad)
    assert "grad" not in asked["calls"] and not [n for n in asked["aten"] if "backward" in n]
    assert "exp" in asked["graph"]
    derived = watched(lambda y, g: g * y * (1 - y), torch.sigmoid(x), grad)  # a derived backward builds nothing
    assert derived["graph"] == []


def test_watched_sees_the_graph_by_the_calls_when_the_dispatch_keys_are_excluded():
    """torch._C._ExcludeDispatchKeyGuard over the Python dispatch keys hides a call's operators from every dispatch
    mode (before: no operator, no graph recorded); the functions it calls still show the graph it builds."""
    torch = pytest.importorskip("torch")
    from torch.autograd import Variable

    from autograder.probes.stand_ins import watched

    hidden = (torch._C.DispatchKeySet(torch._C.DispatchKey.Python)
              | torch._C.DispatchKeySet(torch._C.DispatchKey.PythonTLSSnapshot))

    def asks_unseen(x, grad):
        with (torch.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t), torch.enable_grad(),
              torch._C._ExcludeDispatchKeyGuard(hidden)):
            a = x.detach().requires_grad_(True)
            y = 1 / (1 + torch.exp(-a))
            return Variable._execution_engine.run_backward((y,), (grad,), False, False, (a,), False, False)[0]

    asked = watched(asks_unseen, torch.randn(5, dtype=torch.float64), torch.randn(5, dtype=torch.float64))
    assert asked["raised"] is None and asked["aten"] == []
    assert "exp" in asked["graph"]
