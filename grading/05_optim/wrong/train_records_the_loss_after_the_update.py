"""train records the loss after the update."""
# exercise: train
# message: train

def train(model, optimizer, loss_fn, x, y, steps):
    losses = []
    for _ in range(steps):
        optimizer.zero_grad()
        loss_fn(model(x), y).backward()
        optimizer.step()
        losses.append(loss_fn(model(x), y).item())
    return losses
