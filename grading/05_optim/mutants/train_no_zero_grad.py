"""train never zeroes the gradients, so each step uses the sum of all gradients so far."""
# replaces: train
# caught by: test_train, test_train_hidden
def train(model, optimizer, loss_fn, x, y, steps):
    losses = []
    for _ in range(steps):
        loss = loss_fn(model(x), y)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses
