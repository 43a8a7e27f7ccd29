"""softplus as max(x, 0): drops the log1p(exp(-|x|)) term that makes it smooth."""
# replaces: softplus
# caught by: test_softplus
def softplus(x):
    """x: array of any shape; returns log(1 + exp(x)) elementwise, float64, same shape."""
    return np.maximum(np.asarray(x, dtype=float), 0.0)
