"""mlp_backward the slides' way on rows, summed over the leading indices one at a time (np.ndindex), as the batch's gradient is the sum of its pieces'."""
# exercise: mlp_backward


def mlp_backward(x, y, w1, w2, cache):
    h, h_relu, y_pred = cache
    grad_w1, grad_w2 = np.zeros_like(w1, dtype=np.result_type(x, w1)), np.zeros_like(w2, dtype=np.result_type(x, w2))
    for index in np.ndindex(x.shape[:-2]):  # () once for rows of examples
        e = 2.0 * (y_pred[index] - y[index])
        grad_h = np.matmul(e, w2.T)
        grad_h[h[index] <= 0] = 0
        grad_w2 += np.dot(h_relu[index].T, e)
        grad_w1 += np.dot(x[index].T, grad_h)
    return grad_w1, grad_w2
