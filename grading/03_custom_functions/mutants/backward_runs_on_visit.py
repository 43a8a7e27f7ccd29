"""backward calls each node's _backward as the search first reaches it (pre-order), before the other users of its parents have pushed."""
# replaces: backward
# caught by: test_backward, test_backward_hidden


def backward(root):
    seen = set()
    root.grad = np.ones_like(root.data)

    def visit(node):
        if id(node) in seen:
            return
        seen.add(id(node))
        node._backward()
        for parent in node.parents:
            visit(parent)

    visit(root)
