"""train_challenge builds an optimizer but never steps it: the model comes back as it was initialised."""
# replaces: challenge
# caught by: test_challenge, test_challenge_90, test_challenge_93, test_challenge_945
def build_challenge_model(in_features, num_classes):
    return nn.Sequential(nn.Linear(in_features, 64), nn.ReLU(),
                         nn.Linear(64, 64), nn.ReLU(),
                         nn.Linear(64, num_classes))


def train_challenge(model, train_loader, device):
    model.to(device).train()
    optimizer = torch.optim.Adam(model.parameters(), lr=0.02)
    for _ in range(400 // len(train_loader)):
        for x, y in train_loader:
            x, y = x.to(device), y.to(device)
            optimizer.zero_grad()
            nn.functional.cross_entropy(model(x), y).backward()
    return model
