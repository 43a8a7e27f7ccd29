"""LinearRegression stores w and b as plain tensors with requires_grad, not nn.Parameter: nothing is registered."""
# replaces: LinearRegression
# caught by: test_LinearRegression, test_LinearRegression_hidden
class LinearRegression(nn.Module):
    """y_pred = x @ w.T + b with nn.Parameters w: (1, d) and b: (1,), both starting at zero."""

    def __init__(self, d):
        super().__init__()
        self.w = torch.zeros(1, d, requires_grad=True)
        self.b = torch.zeros(1, requires_grad=True)

    def forward(self, x):
        """x: (N, d); returns y_pred: (N, 1)."""
        return x @ self.w.T + self.b
