"""backward runs the nodes breadth-first from the root: by distance, not a topological order (a node may run before all its users)."""
# replaces: backward
# caught by: test_backward, test_backward_hidden


def backward(root):
    from collections import deque
    root.grad = np.ones_like(root.data)
    queue, seen = deque([root]), {id(root)}
    while queue:
        node = queue.popleft()
        node._backward()
        for parent in node.parents:
            if id(parent) not in seen:
                seen.add(id(parent))
                queue.append(parent)
