"""ParallelBlock uses one layer under two names."""
# exercise: ParallelBlock
# message: ParallelBlock

class ParallelBlock(nn.Module):
    def __init__(self, d_in, d_out):
        super().__init__()
        self.linear1 = nn.Linear(d_in, d_out)
        self.linear2 = self.linear1
    def forward(self, x):
        return (self.linear1(x) * self.linear2(x)).clamp(min=0)
