"""finetune with nn.CrossEntropyLoss, zero_grad after the step, losses repeated per sample."""
# exercise: finetune

def finetune(model, train_loader, val_loader, epochs, device, learning_rate=0.01):
    model = model.to(device).eval()
    optimizer = make_finetune_optimizer(model, learning_rate=learning_rate)
    criterion = nn.CrossEntropyLoss()
    history = {"train_loss": [], "val_loss": [], "val_accuracy": []}
    for _ in range(epochs):
        losses = []
        for x, y in train_loader:
            loss = criterion(model(x.to(device)), y.to(device))
            loss.backward()
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)
            losses += [loss.item()] * y.numel()
        history["train_loss"].append(sum(losses) / len(losses))
        for key, value in zip(("val_loss", "val_accuracy"), evaluate(model, val_loader, F.cross_entropy, device)):
            history[key].append(value)
    return history
