"""graph_ops walks only the first entry of next_functions, a chain instead of the graph: branches are missed."""
# replaces: graph_ops
# caught by: test_graph_ops, test_graph_ops_hidden


def graph_ops(t):
    """Names of the backward nodes reachable from t.grad_fn, breadth-first, each node once."""
    names = []
    node = t.grad_fn
    while node is not None:
        names.append(type(node).__name__)
        node = node.next_functions[0][0] if node.next_functions else None
    return names
