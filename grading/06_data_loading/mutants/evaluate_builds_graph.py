"""evaluate runs without torch.no_grad(), so every validation forward pass builds a graph nobody uses."""
# replaces: evaluate
# caught by: test_evaluate, test_evaluate_hidden
def evaluate(model, loader, loss_fn, device):
    model.eval()
    total_loss, correct, count = 0.0, 0, 0
    for x, y in loader:
        x, y = x.to(device), y.to(device)
        logits = model(x)
        total_loss += loss_fn(logits, y).item() * len(x)
        correct += (logits.argmax(dim=1) == y).sum().item()
        count += len(x)
    return total_loss / count, correct / count
