"""TwoLayerNet registering linear2 first, with an nn.ReLU module."""
# exercise: TwoLayerNet

class TwoLayerNet(nn.Module):
    def __init__(self, d_in, h, d_out):
        super().__init__()
        self.linear2 = nn.Linear(h, d_out)  # registered first: parameters() lists it first
        self.relu = nn.ReLU()
        self.linear1 = nn.Linear(d_in, h)
    def forward(self, x):
        return self.linear2(self.relu(self.linear1(x)))
