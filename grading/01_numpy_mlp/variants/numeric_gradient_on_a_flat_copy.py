"""numeric_gradient on a flat copy of w, reshaped for f, the two points evaluated as w + eps and w - eps in one loop."""
# exercise: numeric_gradient


def numeric_gradient(f, w, eps=1e-5):
    flat = np.array(w, dtype=np.float64).ravel()
    grad = np.empty_like(flat)
    for i in range(flat.size):
        values = []
        for sign in (1.0, -1.0):
            point = flat.copy()
            point[i] += sign * eps
            values.append(f(point.reshape(np.shape(w))))
        grad[i] = (values[0] - values[1]) / (2 * eps)
    return grad.reshape(np.shape(w))
