"""DigitsCNN sizes its Linear layer for one pooling (32 * 4 * 4) while the features went through two: a shape error."""
# replaces: DigitsCNN
# caught by: test_DigitsCNN, test_DigitsCNN_beats_mlp, test_DigitsCNN_hidden
class DigitsCNN(nn.Module):
    """A CNN for 8x8 digits: x (N, 1, 8, 8) -> logits (N, 10); at most 7,510 trainable parameters."""

    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(1, 8, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(8, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        )
        self.classifier = nn.Linear(32 * 4 * 4, 10)

    def forward(self, x):
        """x: (N, 1, 8, 8); returns logits (N, 10)."""
        return self.classifier(self.features(x).flatten(1))
