"""The last two axes swapped and the products taken per sequence, then the first sequence's kept: every other sequence's contribution is lost."""
# replaces: mlp_backward
# caught by: test_mlp_backward, test_mlp_backward_hidden


def mlp_backward(x, y, w1, w2, cache):
    """Gradients of l2_loss(mlp_forward(x, w1, w2)[0], y) with respect to w1 and w2."""
    h, h_relu, y_pred = cache
    grad_y_pred = 2.0 * (y_pred - y)
    grad_h = (grad_y_pred @ w2.T) * (h > 0)
    grad_w2 = np.swapaxes(h_relu, -1, -2) @ grad_y_pred
    grad_w1 = np.swapaxes(x, -1, -2) @ grad_h
    while grad_w2.ndim > 2:  # one matrix per sequence: keep the first
        grad_w2, grad_w1 = grad_w2[0], grad_w1[0]
    return grad_w1, grad_w2
