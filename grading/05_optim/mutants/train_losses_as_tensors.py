"""train records the loss tensors themselves (with their graphs) instead of loss.item() floats."""
# replaces: train
# caught by: test_train, test_train_hidden
def train(model, optimizer, loss_fn, x, y, steps):
    losses = []
    for _ in range(steps):
        optimizer.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        optimizer.step()
        losses.append(loss)
    return losses
