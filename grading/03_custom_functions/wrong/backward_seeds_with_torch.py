"""backward's sweep is right but seeds root.grad through PyTorch (torch.ones_like on a tensor view): the engine is NumPy only."""
# exercise: backward
# message: called PyTorch


def backward(root):
    order, seen = [], set()

    def visit(node):
        if id(node) not in seen:
            seen.add(id(node))
            for parent in node.parents:
                visit(parent)
            order.append(node)

    visit(root)
    root.grad = torch.ones_like(torch.from_numpy(np.asarray(root.data, dtype=np.float64))).numpy()
    for node in reversed(order):
        node._backward()
