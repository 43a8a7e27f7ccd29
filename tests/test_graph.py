"""helpers.graph: the backward graph read from grad_fn, its layout and its drawing."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import pytest
import torch

from helpers.graph import backward_graph, draw_backward_graph, layout


@pytest.fixture(autouse=True)
def close_figures():
    yield
    plt.close("all")


def small_example():
    """The lectures' c = sum(x * y + z): x and z require grad, y does not."""
    torch.manual_seed(0)
    x = torch.randn(3, 4, requires_grad=True)
    y = torch.randn(3, 4)
    z = torch.randn(3, 4, requires_grad=True)
    return x, y, z, (x * y + z).sum()


def test_nodes_of_the_small_example():
    x, y, z, c = small_example()
    nodes = backward_graph(c, {"x": x, "z": z})
    assert nodes[0].kind == "output"
    ops = [n.label for n in nodes if n.kind == "op"]
    assert ops == ["SumBackward0", "AddBackward0", "MulBackward0"], ops
    leaves = sorted(n.label.split("\n")[0] for n in nodes if n.kind == "leaf")
    assert leaves == ["x", "z"], "y needs no gradient, so it must not appear as a leaf"


def test_edges_follow_next_functions():
    x, y, z, c = small_example()
    nodes = backward_graph(c, {"x": x, "z": z})
    by_label = {n.label.split("\n")[0]: i for i, n in enumerate(nodes)}
    add = nodes[by_label["AddBackward0"]]
    assert sorted(add.inputs) == sorted([by_label["MulBackward0"], by_label["z"]])
    assert nodes[by_label["MulBackward0"]].inputs == [by_label["x"]]
    assert nodes[by_label["x"]].inputs == []


def test_shared_subgraph_appears_once():
    w = torch.randn(3, requires_grad=True)
    a = w * 2
    b = (a + a).sum()  # a is used twice: one node, two edges into AddBackward0
    nodes = backward_graph(b)
    assert [n.label for n in nodes if n.kind == "op"].count("MulBackward0") == 1
    add = next(n for n in nodes if n.label == "AddBackward0")
    assert len(add.inputs) == 2 and add.inputs[0] == add.inputs[1]


def test_saved_tensors_are_listed_and_survive_backward():
    x, y, z, c = small_example()
    mul = next(n for n in backward_graph(c) if n.label == "MulBackward0")
    assert mul.saved == ["other (3, 4)"], "x * y with only x requiring grad saves y (named `other`)"
    c.backward()  # frees the saved tensors: reading them raises, which the walk must tolerate
    mul = next(n for n in backward_graph(c) if n.label == "MulBackward0")
    assert mul.saved == []


def test_tensor_without_graph_is_a_single_node():
    with torch.no_grad():
        t = torch.randn(2, requires_grad=True) * 3
    nodes = backward_graph(t)
    assert len(nodes) == 1 and nodes[0].inputs == []


@pytest.mark.parametrize("case", ["mlp", "leaf used at two depths"])
def test_layout_puts_every_input_above_its_user(case):
    torch.manual_seed(0)
    w1 = torch.randn(5, 4, requires_grad=True)
    if case == "mlp":
        w2 = torch.randn(4, 2, requires_grad=True)
        loss = (torch.randn(8, 5).mm(w1).clamp(min=0).mm(w2) - 1).pow(2).sum()
    else:  # w1 feeds the addition directly and, three nodes deeper, through two multiplications
        loss = (w1 + (w1 * 2) * 3).sum()
    nodes = backward_graph(loss)
    pos = layout(nodes)
    assert set(pos) == set(range(len(nodes)))
    for i, node in enumerate(nodes):
        for j in node.inputs:
            assert pos[j][1] > pos[i][1], f"{nodes[j].label} should be drawn above {node.label}"
    assert pos[0][1] == 0, "the output sits at the bottom"


def test_draw_makes_one_box_per_node_and_one_arrow_per_edge():
    x, y, z, c = small_example()
    ax = draw_backward_graph(c, {"x": x, "z": z, "c": c}, show_saved=True)
    nodes = backward_graph(c)
    arrows = [t for t in ax.texts if isinstance(t, matplotlib.text.Annotation)]
    boxes = [t for t in ax.texts if not isinstance(t, matplotlib.text.Annotation)]
    assert len(boxes) == len(nodes)
    assert len(arrows) == sum(len(n.inputs) for n in nodes)
    labels = " ".join(t.get_text() for t in boxes)
    assert "c\n(scalar)" in labels and "saves other (3, 4)" in labels
