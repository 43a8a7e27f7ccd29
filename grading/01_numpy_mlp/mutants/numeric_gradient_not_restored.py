"""The perturbed entry is never put back: the caller's w is left shifted, and later entries see a wrong w."""
# replaces: numeric_gradient
# caught by: test_numeric_gradient, test_numeric_gradient_hidden


def numeric_gradient(f, w, eps=1e-5):
    """Centered-difference estimate of the gradient of the scalar function f at w."""
    grad = np.zeros_like(w)
    for index in np.ndindex(w.shape):
        original = w[index]
        w[index] = original + eps
        f_plus = f(w)
        w[index] = original - eps
        f_minus = f(w)
        grad[index] = (f_plus - f_minus) / (2 * eps)
    return grad
