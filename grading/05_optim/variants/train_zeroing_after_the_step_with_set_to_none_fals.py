"""train zeroing after the step, with set_to_none=False."""
# exercise: train

def train(model, optimizer, loss_fn, x, y, steps):
    losses = []
    for _ in range(steps):
        loss = loss_fn(model(x), y)
        loss.backward()
        losses.append(loss.item())
        optimizer.step()
        optimizer.zero_grad(set_to_none=False)
    return losses
