"""evaluate never calls model.eval(): dropout stays on and batch norm uses batch statistics during validation."""
# replaces: evaluate
# caught by: test_evaluate, test_evaluate_hidden
def evaluate(model, loader, loss_fn, device):
    total_loss, correct, count = 0.0, 0, 0
    with torch.no_grad():
        for x, y in loader:
            x, y = x.to(device), y.to(device)
            logits = model(x)
            total_loss += loss_fn(logits, y).item() * len(x)
            correct += (logits.argmax(dim=1) == y).sum().item()
            count += len(x)
    return total_loss / count, correct / count
