def softplus(x):
    """x: array of any shape; returns log(1 + exp(x)) elementwise, float64, same shape."""
    ### BEGIN SOLUTION
    x = np.asarray(x, dtype=np.float64)
    return np.maximum(x, 0.0) + np.log1p(np.exp(-np.abs(x)))
    ### END SOLUTION
