"""graph_ops keeps no set of visited nodes, so a node reached along two paths is listed twice."""
# replaces: graph_ops
# caught by: test_graph_ops, test_graph_ops_hidden


def graph_ops(t):
    """Names of the backward nodes reachable from t.grad_fn, breadth-first, each node once."""
    from collections import deque

    if t.grad_fn is None:
        return []
    queue = deque([t.grad_fn])
    names = []
    while queue:
        node = queue.popleft()
        names.append(type(node).__name__)
        for next_node, _ in node.next_functions:
            if next_node is not None:
                queue.append(next_node)
    return names
