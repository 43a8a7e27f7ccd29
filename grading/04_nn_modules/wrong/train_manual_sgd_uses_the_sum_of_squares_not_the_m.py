"""train_manual_sgd uses the sum of squares, not the mean."""
# exercise: train_manual_sgd
# message: train_manual_sgd

def train_manual_sgd(model, x, y, learning_rate, steps):
    losses = []
    for _ in range(steps):
        loss = ((model(x) - y) ** 2).sum()
        model.zero_grad()
        loss.backward()
        with torch.no_grad():
            for p in model.parameters():
                if p.grad is not None:
                    p -= learning_rate * p.grad
        losses.append(loss.item())
    return losses
