"""train_one_epoch never calls model.train(), so after evaluate() it trains with dropout and batch norm in eval mode."""
# replaces: train_one_epoch
# caught by: test_train_one_epoch, test_train_one_epoch_hidden
def train_one_epoch(model, loader, optimizer, loss_fn, device):
    total, count = 0.0, 0
    for x, y in loader:
        x, y = x.to(device), y.to(device)
        optimizer.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        optimizer.step()
        total += loss.item() * len(x)
        count += len(x)
    return total / count
