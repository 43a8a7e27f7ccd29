"""train_challenge trains on the notebook's own spiral (the globals x_challenge_train, y_challenge_train), not on its train_loader."""
# replaces: challenge
# caught by: test_challenge_90, test_challenge_93, test_challenge_945
def build_challenge_model(in_features, num_classes):
    return nn.Sequential(nn.Linear(in_features, 64), nn.ReLU(),
                         nn.Linear(64, 64), nn.ReLU(),
                         nn.Linear(64, num_classes))


def train_challenge(model, train_loader, device):
    model.to(device).train()
    optimizer = torch.optim.Adam(model.parameters(), lr=0.02)
    schedule = torch.optim.lr_scheduler.OneCycleLR(optimizer, max_lr=0.02, total_steps=400)
    for step in range(400):
        batch = torch.arange(step * 50, step * 50 + 50) % len(x_challenge_train)
        x, y = x_challenge_train[batch].to(device), y_challenge_train[batch].to(device)
        optimizer.zero_grad()
        nn.functional.cross_entropy(model(x), y).backward()
        optimizer.step()
        schedule.step()
    return model
