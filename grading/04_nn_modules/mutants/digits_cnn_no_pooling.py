"""DigitsCNN flattens the full 8x8 feature maps into the Linear layer: no pooling, 20,000+ parameters, over the budget."""
# replaces: DigitsCNN
# caught by: test_DigitsCNN
class DigitsCNN(nn.Module):
    """A CNN for 8x8 digits: x (N, 1, 8, 8) -> logits (N, 10); at most 7,510 trainable parameters."""

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 16, 3, padding=1)
        self.conv2 = nn.Conv2d(16, 32, 3, padding=1)
        self.fc = nn.Linear(32 * 8 * 8, 10)

    def forward(self, x):
        """x: (N, 1, 8, 8); returns logits (N, 10)."""
        return self.fc(F.relu(self.conv2(F.relu(self.conv1(x)))).flatten(1))
