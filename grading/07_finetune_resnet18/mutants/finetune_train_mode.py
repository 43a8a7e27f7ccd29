"""Backbone left in train mode: model.train() each epoch, so every BatchNorm's running statistics move."""
# replaces: finetune
# caught by: test_finetune, test_finetune_hidden


def finetune(model, train_loader, val_loader, epochs, device, learning_rate=0.01):
    model.to(device)
    optimizer = make_finetune_optimizer(model, learning_rate)
    history = {"train_loss": [], "val_loss": [], "val_accuracy": []}
    for _ in range(epochs):
        model.train()
        total, count = 0.0, 0
        for x, y in train_loader:
            x, y = x.to(device), y.to(device)
            optimizer.zero_grad()
            loss = F.cross_entropy(model(x), y)
            loss.backward()
            optimizer.step()
            total += loss.item() * len(x)
            count += len(x)
        val_loss, val_accuracy = evaluate(model, val_loader, F.cross_entropy, device)
        history["train_loss"].append(total / count)
        history["val_loss"].append(val_loss)
        history["val_accuracy"].append(val_accuracy)
    return history
