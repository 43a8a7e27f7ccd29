"""LinearRegression with b of shape (1, 1)."""
# exercise: LinearRegression
# message: LinearRegression

class LinearRegression(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.w, self.b = nn.Parameter(torch.zeros(1, d)), nn.Parameter(torch.zeros(1, 1))
    def forward(self, x):
        return x @ self.w.T + self.b
