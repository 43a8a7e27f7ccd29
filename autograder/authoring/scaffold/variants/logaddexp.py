"""softplus in one call: log(exp(0) + exp(x)) by np.logaddexp, stable by construction."""
# exercise: softplus

def softplus(x):
    return np.logaddexp(0.0, np.asarray(x, dtype=np.float64))
