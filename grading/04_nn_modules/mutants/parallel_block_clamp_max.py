"""ParallelBlock clamps with max=0 instead of min=0, keeping the negative part of the product."""
# replaces: ParallelBlock
# caught by: test_ParallelBlock, test_ParallelBlock_hidden
class ParallelBlock(nn.Module):
    """(linear1(x) * linear2(x)).clamp(min=0), with linear1 and linear2 both nn.Linear(d_in, d_out)."""

    def __init__(self, d_in, d_out):
        super().__init__()
        self.linear1 = nn.Linear(d_in, d_out)
        self.linear2 = nn.Linear(d_in, d_out)

    def forward(self, x):
        """x: (N, d_in); returns (N, d_out), every entry >= 0."""
        return (self.linear1(x) * self.linear2(x)).clamp(max=0)
