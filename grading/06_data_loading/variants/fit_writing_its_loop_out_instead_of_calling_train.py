"""fit writing its loop out instead of calling train_one_epoch and evaluate."""
# exercise: fit

def fit(model, train_loader, val_loader, optimizer, loss_fn, device, num_epochs):
    history = {"train_loss": [], "val_loss": [], "val_accuracy": []}
    for _ in tqdm(range(num_epochs), file=sys.stdout, disable=True):
        model.train()
        total = count = 0
        for x, y in train_loader:
            optimizer.zero_grad()
            loss = loss_fn(model(x.to(device)), y.to(device))
            loss.backward()
            optimizer.step()
            total, count = total + loss.item() * len(y), count + len(y)
        model.eval()
        with torch.no_grad():
            pairs = [(model(x.to(device)), y.to(device)) for x, y in val_loader]
        n = sum(len(y) for _, y in pairs)
        history["train_loss"].append(total / count)
        history["val_loss"].append(sum(loss_fn(p, y).item() * len(y) for p, y in pairs) / n)
        history["val_accuracy"].append(sum((p.argmax(1) == y).sum().item() for p, y in pairs) / n)
    return history
