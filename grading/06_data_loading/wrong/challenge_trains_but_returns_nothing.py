"""train_challenge trains the model in place but forgets to return it (returns None)."""
# exercise: train_challenge
# message: not an nn.Module
def train_challenge(model, train_loader, device):
    model.to(device).train()
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
    for _ in range(10):
        for x, y in train_loader:
            optimizer.zero_grad()
            nn.functional.cross_entropy(model(x.to(device)), y.to(device)).backward()
            optimizer.step()
