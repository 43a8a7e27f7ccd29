"""The challenge with three SiLU layers, AdamW, noise added to the inputs, a step schedule, and a copy of the model returned."""
# exercise: train_challenge
def build_challenge_model(in_features, num_classes):
    layers, width = [], in_features
    for _ in range(3):
        layers += [nn.Linear(width, 48), nn.SiLU()]
        width = 48
    return nn.Sequential(*layers, nn.Linear(width, num_classes))


def train_challenge(model, train_loader, device):
    net = copy.deepcopy(model).to(device)
    net.train()
    optimizer = torch.optim.AdamW(net.parameters(), lr=0.02, weight_decay=1e-4)
    schedule = torch.optim.lr_scheduler.MultiStepLR(optimizer, milestones=[7, 9], gamma=0.3)
    for _ in range(10):
        for x, y in train_loader:
            x, y = x.to(device), y.to(device)
            x = x + 0.01 * torch.randn_like(x)  # a little augmentation
            optimizer.zero_grad()
            nn.functional.cross_entropy(net(x), y).backward()
            optimizer.step()
        schedule.step()
    return net
