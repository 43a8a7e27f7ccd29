"""Draw the backward graph that autograd records, from `grad_fn`, with matplotlib only.

Every tensor produced by a differentiable operation points to the node that will compute its
gradient (`t.grad_fn`); each node points to the nodes of its inputs (`node.next_functions`).
Walking those pointers from the loss gives the whole graph: operation nodes such as
`MulBackward0`, and one `AccumulateGrad` node per leaf tensor that requires grad, which is
where `backward()` deposits `.grad`. No graphviz binary is needed.

Typical use in a notebook::

    loss = ((x @ w1).clamp(min=0) @ w2 - y).pow(2).sum()
    draw_backward_graph(loss, names={"w1": w1, "w2": w2})
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import matplotlib.pyplot as plt
import torch

# Box colours: the output, operations, leaves that receive .grad.
COLORS = {"output": "#fde68a", "op": "#bfdbfe", "leaf": "#bbf7d0"}


@dataclass
class GraphNode:
    """One node of a backward graph.

    `kind` is "output" (the tensor the walk started from), "op" (a backward function) or
    "leaf" (an `AccumulateGrad` node: a leaf tensor whose `.grad` backward() fills).
    `inputs` are the indices of the nodes this one sends gradients to (its `next_functions`).
    """

    label: str
    kind: str
    inputs: list[int] = field(default_factory=list)
    saved: list[str] = field(default_factory=list)


def _tensor_label(t: torch.Tensor, names: Mapping[int, str]) -> str:
    shape = "x".join(str(s) for s in t.shape) or "scalar"
    name = names.get(id(t))
    return f"{name}\n({shape})" if name else f"({shape})"


def _saved_tensors(fn) -> list[str]:
    """'name (shape)' for each tensor a backward node keeps for its gradient formula."""
    saved = []
    for attr in dir(fn):
        if not attr.startswith("_saved_"):
            continue
        try:
            value = getattr(fn, attr)
        except RuntimeError:  # freed by an earlier backward()
            continue
        if isinstance(value, torch.Tensor):
            saved.append(f"{attr[len('_saved_'):]} {tuple(value.shape)}")
    return saved


def backward_graph(output: torch.Tensor, names: Mapping[str, torch.Tensor] | None = None) -> list[GraphNode]:
    """The backward graph behind `output` as a list of nodes; node 0 is `output` itself.

    `names` maps a display name to a leaf tensor ({"w1": w1}); leaves not named are shown by
    shape. Shared sub-graphs appear once (the graph is a DAG, not a tree). A tensor without
    `grad_fn` (a leaf, or one computed under `no_grad`) gives a graph of one node.
    """
    by_id = {id(t): name for name, t in (names or {}).items()}
    root = GraphNode(_tensor_label(output, by_id), "output")
    nodes = [root]
    if output.grad_fn is None:
        return nodes
    index: dict[object, int] = {}
    pending = [output.grad_fn]
    index[output.grad_fn] = 1
    nodes.append(GraphNode(type(output.grad_fn).__name__, "op"))
    root.inputs.append(1)
    while pending:
        fn = pending.pop(0)  # breadth first: nodes are numbered layer by layer
        node = nodes[index[fn]]
        node.saved = _saved_tensors(fn)
        for child, _ in fn.next_functions:
            if child is None:  # an input that needs no gradient
                continue
            if child not in index:
                index[child] = len(nodes)
                if hasattr(child, "variable"):  # AccumulateGrad holds its leaf tensor
                    nodes.append(GraphNode(_tensor_label(child.variable, by_id), "leaf"))
                else:
                    nodes.append(GraphNode(type(child).__name__, "op"))
                pending.append(child)
            node.inputs.append(index[child])
    return nodes


def _layers(nodes: list[GraphNode]) -> list[list[int]]:
    """Nodes grouped by their longest distance from the output, so every arrow points one way."""
    depth = [0] * len(nodes)
    order = _topological(nodes)
    for i in order:
        for j in nodes[i].inputs:
            depth[j] = max(depth[j], depth[i] + 1)
    layers: list[list[int]] = [[] for _ in range(max(depth) + 1)]
    for i in order:
        layers[depth[i]].append(i)
    return layers


def _topological(nodes: list[GraphNode]) -> list[int]:
    """Node indices such that each node comes before the nodes it sends gradients to."""
    indegree = [0] * len(nodes)
    for node in nodes:
        for j in node.inputs:
            indegree[j] += 1
    ready = [i for i, d in enumerate(indegree) if d == 0]
    order = []
    while ready:
        i = ready.pop(0)
        order.append(i)
        for j in nodes[i].inputs:
            indegree[j] -= 1
            if indegree[j] == 0:
                ready.append(j)
    return order


def layout(nodes: list[GraphNode]) -> dict[int, tuple[float, float]]:
    """(x, y) for every node: the output at the bottom (y = 0), leaves towards the top.

    Within a layer, nodes are ordered by the mean x of the nodes that use them, which keeps
    most arrows from crossing.
    """
    layers = _layers(nodes)
    users: dict[int, list[int]] = {i: [] for i in range(len(nodes))}
    for i, node in enumerate(nodes):
        for j in node.inputs:
            users[j].append(i)
    pos: dict[int, tuple[float, float]] = {}
    for depth, layer in enumerate(layers):
        def mean_user_x(i: int) -> float:
            xs = [pos[u][0] for u in users[i] if u in pos]
            return sum(xs) / len(xs) if xs else 0.0

        layer.sort(key=mean_user_x)
        for k, i in enumerate(layer):
            pos[i] = (k - (len(layer) - 1) / 2, float(depth))
    return pos


def draw_backward_graph(output: torch.Tensor, names: Mapping[str, torch.Tensor] | None = None,
                        show_saved: bool = False, title: str | None = None,
                        ax: plt.Axes | None = None) -> plt.Axes:
    """Plot the backward graph behind `output`: leaves at the top, `output` at the bottom.

    Arrows follow the forward computation (input -> operation -> result); `backward()` walks
    them in reverse, from the output up to the green leaves whose `.grad` it fills.
    `show_saved` lists in each box the tensors that node keeps alive for the backward pass.
    """
    nodes = backward_graph(output, names)
    pos = layout(nodes)
    width = max(x for x, _ in pos.values()) - min(x for x, _ in pos.values()) + 1
    height = max(y for _, y in pos.values()) + 1
    if ax is None:
        _, ax = plt.subplots(figsize=(max(4.0, 2.3 * width), max(1.5, 0.8 * height + 0.5)))
    for i, node in enumerate(nodes):
        for j in node.inputs:
            (x0, y0), (x1, y1) = pos[j], pos[i]
            ax.annotate("", xy=(x1, y1), xytext=(x0, y0),
                        arrowprops={"arrowstyle": "-|>", "color": "#475569", "lw": 1.2,
                                    "shrinkA": 16, "shrinkB": 16})
    for i, node in enumerate(nodes):
        x, y = pos[i]
        text = node.label
        if show_saved and node.saved:
            text += "\nsaves " + ", ".join(node.saved)
        ax.text(x, y, text, ha="center", va="center", fontsize=8, zorder=3,
                bbox={"boxstyle": "round,pad=0.35", "facecolor": COLORS[node.kind], "edgecolor": "#334155"})
    ax.set_xlim(min(x for x, _ in pos.values()) - 0.7, max(x for x, _ in pos.values()) + 0.7)
    ax.set_ylim(-0.6, height - 0.4)
    ax.axis("off")
    ax.set_title(title or f"Backward graph: {len(nodes) - 1} nodes behind the output", fontsize=10)
    return ax
