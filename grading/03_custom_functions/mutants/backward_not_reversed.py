"""backward walks the topological order forwards, from the leaves: every _backward runs before its node has a gradient."""
# replaces: backward
# caught by: test_backward, test_backward_hidden


def backward(root):
    """Reverse-mode sweep from root (a Value, usually a 0-d loss): root.grad becomes ones, then every node
    reachable from root through .parents runs its _backward exactly once, after all the nodes that use it."""
    order, seen = [], set()

    def visit(node):
        if id(node) in seen:
            return
        seen.add(id(node))
        for parent in node.parents:
            visit(parent)
        order.append(node)  # after all its parents: a topological order

    visit(root)
    root.grad = np.ones_like(root.data)
    for node in order:
        node._backward()
