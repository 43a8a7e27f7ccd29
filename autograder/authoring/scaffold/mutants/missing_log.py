"""softplus without the log: 1 + exp(x)."""
# replaces: softplus
# caught by: test_softplus, test_softplus_hidden
def softplus(x):
    """x: array of any shape; returns log(1 + exp(x)) elementwise, float64, same shape."""
    return 1.0 + np.exp(np.minimum(np.asarray(x, dtype=float), 50.0))
