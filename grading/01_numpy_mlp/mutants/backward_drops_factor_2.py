"""The factor 2 of d(e**2)/de is dropped: grad_y_pred = y_pred - y, so both gradients are half the truth."""
# replaces: mlp_backward
# caught by: test_mlp_backward, test_mlp_backward_hidden


def mlp_backward(x, y, w1, w2, cache):
    """Gradients of l2_loss(mlp_forward(x, w1, w2)[0], y) with respect to w1 and w2."""
    h, h_relu, y_pred = cache
    rows = int(np.prod(x.shape[:-1]))  # every leading index is a row
    grad_y_pred = y_pred - y
    grad_h = (grad_y_pred @ w2.T) * (h > 0)
    grad_w2 = h_relu.reshape(rows, -1).T @ grad_y_pred.reshape(rows, -1)
    grad_w1 = x.reshape(rows, -1).T @ grad_h.reshape(rows, -1)
    return grad_w1, grad_w2
