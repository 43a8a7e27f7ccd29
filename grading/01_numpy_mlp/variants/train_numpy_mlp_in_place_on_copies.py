"""train_numpy_mlp updating copies in place with -=, losses as NumPy floats."""
# exercise: train_numpy_mlp


def train_numpy_mlp(x, y, w1, w2, learning_rate, steps):
    w1, w2 = w1.copy(), w2.copy()
    losses = []
    for _ in range(steps):
        y_pred, cache = mlp_forward(x, w1, w2)
        losses.append(np.sum((y_pred - y) ** 2))
        grad_w1, grad_w2 = mlp_backward(x, y, w1, w2, cache)
        w1 -= learning_rate * grad_w1
        w2 -= learning_rate * grad_w2
    return w1, w2, losses
