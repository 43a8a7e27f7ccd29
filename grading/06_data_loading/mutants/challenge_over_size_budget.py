"""build_challenge_model is too big: two hidden layers of 128 units hold 17,283 numbers, over the 5,000 budget."""
# replaces: challenge
# caught by: test_challenge, test_challenge_90, test_challenge_93, test_challenge_945
def build_challenge_model(in_features, num_classes):
    return nn.Sequential(nn.Linear(in_features, 128), nn.ReLU(),
                         nn.Linear(128, 128), nn.ReLU(),
                         nn.Linear(128, num_classes))


def train_challenge(model, train_loader, device):
    epochs = 400 // len(train_loader)
    model.to(device).train()
    optimizer = torch.optim.Adam(model.parameters(), lr=0.02)
    schedule = torch.optim.lr_scheduler.OneCycleLR(optimizer, max_lr=0.02, total_steps=epochs * len(train_loader))
    for _ in range(epochs):
        for x, y in train_loader:
            x, y = x.to(device), y.to(device)
            optimizer.zero_grad()
            nn.functional.cross_entropy(model(x), y).backward()
            optimizer.step()
            schedule.step()
    return model
