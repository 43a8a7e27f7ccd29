"""linear(x, w, b) writes x @ w.T + b out instead of calling Linear.apply: PyTorch's nodes, none of them Linear's."""
# replaces: linear
# caught by: test_linear, test_linear_hidden
def linear(x, w, b=None):
    """x @ w.T + b through the custom Function (x: (N, D_in), w: (D_out, D_in), b: (D_out,) or None): one Linear node."""
    y = x @ w.T
    return y if b is None else y + b
