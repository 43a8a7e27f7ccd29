"""The forward pass detaches the hidden layer (x @ w1).detach(), so no gradient reaches w1."""
# replaces: torch_mlp_forward
# caught by: test_torch_mlp_forward, test_torch_mlp_forward_hidden


def torch_mlp_forward(x, w1, w2):
    """relu(x @ w1) @ w2 with torch operations, so that autograd records the graph."""
    h = (x @ w1).detach()
    return h.clamp(min=0) @ w2
