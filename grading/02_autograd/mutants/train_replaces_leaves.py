"""The update rebinds the names (w1 = w1 - lr * w1.grad) instead of updating in place: the caller's weights never change."""
# replaces: train_autograd_mlp
# caught by: test_train_autograd_mlp, test_train_autograd_mlp_hidden


def train_autograd_mlp(x, y, w1, w2, learning_rate, steps):
    """Full-batch gradient descent with autograd, updating the caller's w1 and w2 in place."""
    losses = []
    for _ in range(steps):
        loss = ((torch_mlp_forward(x, w1, w2) - y) ** 2).sum()
        losses.append(loss.item())
        loss.backward()
        with torch.no_grad():
            w1 = w1 - learning_rate * w1.grad
            w2 = w2 - learning_rate * w2.grad
        w1.requires_grad_()
        w2.requires_grad_()
    return losses
