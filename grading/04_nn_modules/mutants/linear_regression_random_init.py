"""LinearRegression initialises w and b with torch.randn instead of zeros."""
# replaces: LinearRegression
# caught by: test_LinearRegression, test_LinearRegression_hidden
class LinearRegression(nn.Module):
    """y_pred = x @ w.T + b with nn.Parameters w: (1, d) and b: (1,), both starting at zero."""

    def __init__(self, d):
        super().__init__()
        self.w = nn.Parameter(torch.randn(1, d))
        self.b = nn.Parameter(torch.randn(1))

    def forward(self, x):
        """x: (N, d); returns y_pred: (N, 1)."""
        return x @ self.w.T + self.b
