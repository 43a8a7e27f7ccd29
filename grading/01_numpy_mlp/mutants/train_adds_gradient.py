"""The update adds the gradient (w + learning_rate * grad) instead of subtracting it: gradient ascent."""
# replaces: train_numpy_mlp
# caught by: test_train_numpy_mlp, test_train_numpy_mlp_hidden


def train_numpy_mlp(x, y, w1, w2, learning_rate, steps):
    """Full-batch gradient descent on l2_loss, with mlp_forward and mlp_backward."""
    losses = []
    for _ in range(steps):
        y_pred, cache = mlp_forward(x, w1, w2)
        losses.append(float(l2_loss(y_pred, y)))
        grad_w1, grad_w2 = mlp_backward(x, y, w1, w2, cache)
        w1 = w1 + learning_rate * grad_w1
        w2 = w2 + learning_rate * grad_w2
    return w1, w2, losses
