"""train_manual_sgd never zeroes the gradients, so each step uses the sum of all past gradients."""
# replaces: train_manual_sgd
# caught by: test_train_manual_sgd, test_train_manual_sgd_hidden
def train_manual_sgd(model, x, y, learning_rate, steps):
    """Gradient descent on F.mse_loss(model(x), y), updating model in place; returns the losses (floats).

    x: (N, ...) inputs; y: targets shaped like model(x). losses[t] is the loss before update t.
    """
    losses = []
    for _ in range(steps):
        loss = F.mse_loss(model(x), y)
        loss.backward()
        with torch.no_grad():
            for p in model.parameters():
                if p.grad is not None:
                    p -= learning_rate * p.grad
        losses.append(loss.item())
    return losses
