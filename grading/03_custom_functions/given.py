"""What the grader hands 03's answers in the kernel: a backward called alone under a watch, graph walks, the
engine's stand-in nodes and the grader's own sweep.

Stand-ins build inputs and hand back what the student's objects give; they compute no property, no expected
value and no verdict (autograder/probes/__init__.py). Three observations here are the kernel's word, which the
grading process cannot see for itself (docs/design.md, "What the kernel still reports"): which PyTorch
functions and ATen operators a call ran, whether a backward asked autograd to save a tensor for a backward
pass of its own, and how many FLOPs of matrix products it ran (`watched` and `Watch`, shared with 04 in
autograder/probes/stand_ins.py).
"""

import numpy as np

from autograder.probes.stand_ins import Watch, outcome, watched  # noqa: F401 - the probe reaches them as k.given.*

MAX_NODES = 10_000  # nodes of a graph walked; the probe's largest (the engine's MLP) has about twenty


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
