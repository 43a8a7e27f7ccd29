"""evaluate under inference_mode, accuracy from softmax's argmax."""
# exercise: evaluate

def evaluate(model, loader, loss_fn, device):
    model.train(False)
    losses, hits, n = [], 0, 0
    with torch.inference_mode():
        for x, y in loader:
            logits = model(x.to(device))
            losses.append(loss_fn(logits, y.to(device)) * len(y))
            hits += int((logits.softmax(dim=1).argmax(dim=1) == y.to(device)).sum())
            n += len(y)
    return (torch.stack(losses).sum() / n).item(), hits / n
