"""backward forgets the seed: root.grad stays zero, so every gradient is zero."""
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
    for node in reversed(order):
        node._backward()
