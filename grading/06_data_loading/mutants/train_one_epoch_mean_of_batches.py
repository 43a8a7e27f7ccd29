"""train_one_epoch averages the batch losses with equal weights, so a small last batch counts as much as a full one."""
# replaces: train_one_epoch
# caught by: test_train_one_epoch, test_train_one_epoch_hidden
def train_one_epoch(model, loader, optimizer, loss_fn, device):
    model.train()
    batch_losses = []
    for x, y in loader:
        x, y = x.to(device), y.to(device)
        optimizer.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        optimizer.step()
        batch_losses.append(loss.item())
    return sum(batch_losses) / len(batch_losses)
