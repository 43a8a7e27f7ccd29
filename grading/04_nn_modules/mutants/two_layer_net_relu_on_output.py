"""TwoLayerNet applies a ReLU after the output layer too, so it can never predict a negative value."""
# replaces: TwoLayerNet
# caught by: test_TwoLayerNet, test_TwoLayerNet_hidden
class TwoLayerNet(nn.Module):
    """y_pred = linear2(relu(linear1(x))), with linear1 = nn.Linear(d_in, h) and linear2 = nn.Linear(h, d_out)."""

    def __init__(self, d_in, h, d_out):
        super().__init__()
        self.linear1 = nn.Linear(d_in, h)
        self.linear2 = nn.Linear(h, d_out)

    def forward(self, x):
        """x: (N, d_in); returns y_pred: (N, d_out)."""
        return torch.relu(self.linear2(torch.relu(self.linear1(x))))
