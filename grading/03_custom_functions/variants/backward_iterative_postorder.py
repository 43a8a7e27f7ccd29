"""backward with an explicit stack instead of recursion (post-order by a second visit), root.grad seeded as 1.0: the same answer."""
# exercise: backward


def backward(root):
    order, seen, stack = [], set(), [(root, False)]
    while stack:
        node, done = stack.pop()
        if done:
            order.append(node)
        elif id(node) not in seen:
            seen.add(id(node))
            stack.append((node, True))
            stack.extend((parent, False) for parent in node.parents)
    root.grad = np.ones_like(root.data) * 1.0
    for node in order[::-1]:
        node._backward()
