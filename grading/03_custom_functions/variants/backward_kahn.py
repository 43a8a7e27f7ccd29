"""backward by Kahn's algorithm: count each node's users, run a node once its count reaches zero; the same answer."""
# exercise: backward


def backward(root):
    users, stack, seen = {}, [root], {id(root)}
    while stack:
        node = stack.pop()
        for parent in node.parents:
            users[id(parent)] = users.get(id(parent), 0) + 1
            if id(parent) not in seen:
                seen.add(id(parent))
                stack.append(parent)
    root.grad = np.ones_like(root.data)
    ready = [root]
    while ready:
        node = ready.pop()
        node._backward()
        for parent in node.parents:
            users[id(parent)] -= 1
            if users[id(parent)] == 0:
                ready.append(parent)
