"""ParallelBlock through F.relu(torch.mul(...))."""
# exercise: ParallelBlock

class ParallelBlock(nn.Module):
    def __init__(self, d_in, d_out):
        super().__init__()
        self.linear1, self.linear2 = nn.Linear(d_in, d_out), nn.Linear(d_in, d_out)
    def forward(self, x):
        return F.relu(torch.mul(self.linear1(x), self.linear2(x)))
