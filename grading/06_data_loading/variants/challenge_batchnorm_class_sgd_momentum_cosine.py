"""The challenge with a module class with batch norm, SGD with momentum and a cosine schedule, drawing exactly 400 batches with next()."""
# exercise: train_challenge
# may lose: test_challenge_945
class SpiralNet(nn.Module):
    def __init__(self, in_features, num_classes, hidden=40, depth=3):
        super().__init__()
        layers, width = [], in_features
        for _ in range(depth):
            layers += [nn.Linear(width, hidden), nn.BatchNorm1d(hidden), nn.ReLU()]
            width = hidden
        self.body = nn.Sequential(*layers)
        self.head = nn.Linear(hidden, num_classes)

    def forward(self, x):
        return self.head(self.body(x))


def build_challenge_model(in_features, num_classes):
    return SpiralNet(in_features, num_classes)


def train_challenge(model, train_loader, device):
    model = model.to(device)
    model.train()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, nesterov=True)
    schedule = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=400)
    batches = iter(train_loader)
    for _ in range(400):
        try:
            x, y = next(batches)
        except StopIteration:  # a new epoch
            batches = iter(train_loader)
            x, y = next(batches)
        loss = nn.CrossEntropyLoss()(model(x.to(device)), y.to(device))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        schedule.step()
    return model
