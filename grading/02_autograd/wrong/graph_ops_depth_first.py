"""graph_ops depth-first, every node once: the right names in the wrong order."""
# exercise: graph_ops
# message: graph_ops


def graph_ops(t):
    names, stack, seen = [], [t.grad_fn], set()
    while stack:
        node = stack.pop()
        if node is None or node in seen:
            continue
        seen.add(node)
        names.append(type(node).__name__)
        stack.extend(child for child, _ in reversed(node.next_functions))
    return names
