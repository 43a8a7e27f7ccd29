"""What the grader hands 03's answers in the kernel: a backward called alone under a watch, graph walks, the
engine's stand-in nodes and the grader's own sweep.

Stand-ins build inputs and hand back what the student's objects give; they compute no property, no expected
value and no verdict (autograder/probes/__init__.py). Three observations here are the kernel's word, which the
grading process cannot see for itself (docs/design.md, "What the kernel still reports"): which PyTorch
functions and ATen operators a call ran (`Watch`), whether a backward asked autograd to save a tensor for a
backward pass of its own (`alone`), and how many FLOPs of matrix products it ran (`Aten`).
"""

import numpy as np
import torch
from torch.overrides import TorchFunctionMode
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils.flop_counter import flop_registry

_TEXT = 300  # characters of an error's first line handed back
MAX_NODES = 10_000  # nodes of a graph walked; the probe's largest (the engine's MLP) has about twenty


class AskedAutograd(RuntimeError):
    """A tensor saved for a backward pass while a backward ran alone: it built a graph to ask autograd."""


def _refuse(tensor):
    raise AskedAutograd("autograd was asked to save a tensor for a backward pass inside backward")


def _unpack(tensor):
    return tensor


class Calls(TorchFunctionMode):
    """The names of the PyTorch functions and tensor methods called while it is in force, each once."""

    def __init__(self):
        super().__init__()
        self.seen = set()

    def __torch_function__(self, func, types, args=(), kwargs=None):
        self.seen.add(getattr(func, "__name__", type(func).__name__))
        return func(*args, **(kwargs or {}))


class Aten(TorchDispatchMode):
    """The ATen operators run under it, each once (what a function mode misses: calls made under
    torch._C.DisableTorchFunction), and the FLOPs of its matrix products (mm, addmm, bmm... as einsum, @,
    F.linear reach them) by torch.utils.flop_counter's formulas: what FlopCounterMode counts."""

    @classmethod
    def _should_skip_dynamo(cls) -> bool:  # else the first call imports torch._dynamo: 1.4 s of CPU per kernel
        return False

    def __init__(self):
        super().__init__()
        self.seen = set()
        self.flops = 0

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        out = func(*args, **kwargs)
        self.seen.add(func._overloadpacket.__name__)
        count = flop_registry.get(func._overloadpacket)
        if count is not None:
            self.flops += count(*args, **kwargs, out_val=out)
        return out


class Watch:
    """While in force: the PyTorch functions called (`names`), the ATen operators run (`aten`), the FLOPs of
    the matrix products (`flops`); read them after it ends."""

    def __init__(self):
        self.calls, self.ops = Calls(), Aten()
        self.names, self.aten, self.flops = [], [], 0

    def __enter__(self):
        self.ops.__enter__()
        self.calls.__enter__()
        return self

    def __exit__(self, *exc):
        self.calls.__exit__(*exc)
        self.ops.__exit__(*exc)
        self.names, self.aten, self.flops = sorted(self.calls.seen), sorted(self.ops.seen), self.ops.flops
        return False


def alone(function, *args):
    """function(*args), a Function's backward called on its node, as the engine calls it (grad mode off), with
    autograd refusing to save a tensor for a backward pass (AskedAutograd): what it returned, or the first line
    of what it raised; the PyTorch functions and ATen operators it ran; the FLOPs of its matrix products."""
    watch = Watch()
    outcome = {"returned": None, "raised": None}
    with torch.no_grad(), torch.autograd.graph.saved_tensors_hooks(_refuse, _unpack), watch:
        try:
            outcome["returned"] = function(*args)
        except Exception as error:  # noqa: BLE001 - what it raised is handed back, as what it returned
            text = f"{type(error).__name__}: {error}".strip().splitlines()
            outcome["raised"] = (text[0] if text else type(error).__name__)[:_TEXT]
    outcome.update(calls=watch.names, aten=watch.aten, flops=watch.flops)
    return outcome


def outcome(function, *args):
    """function(*args): what it returned, or the first line of what it raised (autograd's checks of a backward)."""
    try:
        return {"returned": function(*args), "raised": None}
    except Exception as error:  # noqa: BLE001 - handed back, judged by the grader
        return {"returned": None, "raised": f"{type(error).__name__}: {error}".strip().splitlines()[0][:_TEXT]}


def saved(y):
    """The tensors y's node saved for backward (ctx.save_for_backward), in order."""
    return list(y.grad_fn.saved_tensors)


def node_names(t):
    """type(node).__name__ of every node behind t, breadth-first, each once (at most MAX_NODES)."""
    names, queue, seen = [], [t.grad_fn] if t.grad_fn is not None else [], set()
    while queue:
        node = queue.pop(0)
        if node in seen:
            continue
        if len(seen) >= MAX_NODES:  # not a graph autograd built: its nodes never end
            raise RuntimeError(f"the graph behind the result has more than {MAX_NODES} nodes")
        seen.add(node)
        names.append(type(node).__name__)
        queue.extend(child for child, _ in node.next_functions if child is not None)
    return names


def grad_through(y, x, grad):
    """y.backward(grad), then x.grad: the gradient the graph of y sends back to the leaf x."""
    y.backward(grad)
    return x.grad


# -- the engine ------------------------------------------------------------------------------------------------


def sweep(root):
    """The grader's own reverse topological sweep, so that Value is judged without the student's backward."""
    order, seen, stack = [], set(), [(root, False)]
    while stack:
        node, done = stack.pop()
        if done:
            order.append(node)
        elif id(node) not in seen:
            if len(seen) >= MAX_NODES:  # a Value whose parents never end (not a graph the operations built)
                raise RuntimeError(f"the graph behind the loss has more than {MAX_NODES} nodes: look at .parents")
            seen.add(id(node))
            stack.append((node, True))
            stack.extend((parent, False) for parent in node.parents)
    root.grad = np.ones_like(root.data)
    for node in reversed(order):
        node._backward()


class Node:
    """A stand-in node: its output is the weighted sum of its parents', so its _backward adds weight * grad into
    each parent; it counts its calls."""

    def __init__(self, parents, weights):
        self.parents, self.weights = tuple(parents), tuple(weights)
        self.data, self.grad, self.calls = np.zeros(()), np.zeros(()), 0
        self._backward = self._push

    def _push(self):
        self.calls += 1
        for parent, weight in zip(self.parents, self.weights):
            parent.grad = parent.grad + weight * self.grad


def graph(parents, weights):
    """The stand-in nodes of one graph, in order: row i lists node i's parents (earlier nodes, -1 for none)
    and the weight of each edge."""
    nodes = []
    for row, row_weights in zip(np.asarray(parents), np.asarray(weights)):
        chosen = [(nodes[int(p)], float(w)) for p, w in zip(row, row_weights) if p >= 0]
        nodes.append(Node([n for n, _ in chosen], [w for _, w in chosen]))
    return nodes


def node_grads(nodes):
    """Each stand-in node's grad, as a float."""
    return [float(n.grad) for n in nodes]


def node_calls(nodes):
    """How often each stand-in node's _backward ran."""
    return [n.calls for n in nodes]
