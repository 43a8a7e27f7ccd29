"""softplus as log(1 + exp(-x)): the sign inside the exponential is flipped."""
# replaces: softplus
# caught by: test_softplus, test_softplus_hidden
def softplus(x):
    """x: array of any shape; returns log(1 + exp(x)) elementwise, float64, same shape."""
    x = np.asarray(x, dtype=float)
    return np.maximum(-x, 0.0) + np.log1p(np.exp(-np.abs(x)))
