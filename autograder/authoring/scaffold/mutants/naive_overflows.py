"""softplus written as log(1 + exp(x)): exp overflows to inf for x above about 709."""
# replaces: softplus
# caught by: test_softplus_hidden
def softplus(x):
    """x: array of any shape; returns log(1 + exp(x)) elementwise, float64, same shape."""
    return np.log(1.0 + np.exp(np.asarray(x, dtype=float)))
