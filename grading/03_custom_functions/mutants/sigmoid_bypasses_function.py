"""sigmoid(x) writes the formula out again instead of calling Sigmoid.apply: several nodes, none of them Sigmoid's."""
# replaces: sigmoid
# caught by: test_sigmoid
def sigmoid(x):
    """Sigmoid of x (any shape) through the custom Function, so that the graph gets one Sigmoid node."""
    return 1 / (1 + torch.exp(-x))
