"""DigitsCNN with BatchNorm and F-style forward: conv 1->8, BN, ReLU, conv 8->16, BN, ReLU, one max-pool, Linear(256, 10)."""
# exercise: DigitsCNN

class DigitsCNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1, self.bn1 = nn.Conv2d(1, 8, kernel_size=3, padding=1), nn.BatchNorm2d(8)
        self.conv2, self.bn2 = nn.Conv2d(8, 16, kernel_size=3, padding=1), nn.BatchNorm2d(16)
        self.out = nn.Linear(16 * 4 * 4, 10)

    def forward(self, x):
        x = F.relu(self.bn1(self.conv1(x)))
        x = F.max_pool2d(F.relu(self.bn2(self.conv2(x))), 2)
        return self.out(torch.flatten(x, start_dim=1))
