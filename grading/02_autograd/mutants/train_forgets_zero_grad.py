"""The training loop never clears the gradients, so each step follows the sum of all past gradients."""
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
            w1 -= learning_rate * w1.grad
            w2 -= learning_rate * w2.grad
    return losses
