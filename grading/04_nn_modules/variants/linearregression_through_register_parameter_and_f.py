"""LinearRegression through register_parameter and F.linear."""
# exercise: LinearRegression

class LinearRegression(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.register_parameter("w", nn.Parameter(torch.zeros((1, d))))
        self.b = nn.Parameter(torch.tensor([0.0]))
    def forward(self, x):
        return F.linear(x, self.w, self.b)
