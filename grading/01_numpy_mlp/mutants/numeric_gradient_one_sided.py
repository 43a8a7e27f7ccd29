"""One-sided difference (f(w + eps) - f(w)) / eps, the definition's own quotient: error O(eps), not O(eps**2)."""
# replaces: numeric_gradient
# caught by: test_numeric_gradient, test_numeric_gradient_hidden


def numeric_gradient(f, w, eps=1e-5):
    """An estimate of the gradient of the scalar function f at w."""
    w = np.array(w, dtype=np.float64)
    grad = np.zeros_like(w)
    f_here = f(w)
    for index in np.ndindex(w.shape):
        original = w[index]
        w[index] = original + eps
        grad[index] = (f(w) - f_here) / eps
        w[index] = original
    return grad
