"""backward's depth-first search remembers no visited node: a node reached along two paths runs its _backward twice."""
# replaces: backward
# caught by: test_backward, test_backward_hidden


def backward(root):
    order = []

    def visit(node):
        for parent in node.parents:
            visit(parent)
        order.append(node)

    visit(root)
    root.grad = np.ones_like(root.data)
    for node in reversed(order):
        node._backward()
