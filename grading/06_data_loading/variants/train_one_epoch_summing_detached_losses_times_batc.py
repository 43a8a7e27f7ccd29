"""train_one_epoch summing detached losses times batch sizes, zeroing with set_to_none=False."""
# exercise: train_one_epoch

def train_one_epoch(model, loader, optimizer, loss_fn, device):
    model.train(True)
    losses, sizes = [], []
    for batch in loader:
        x, y = (t.to(device) for t in batch)
        loss = loss_fn(model(x), y)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=False)
        losses.append(loss.detach() * y.shape[0])
        sizes.append(y.shape[0])
    return float(torch.stack(losses).sum() / sum(sizes))
