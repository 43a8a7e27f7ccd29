"""grad_w1 multiplied in the wrong order, grad_h.T @ x instead of x.T @ grad_h: shape (H, D_in), a transpose."""
# replaces: mlp_backward
# caught by: test_mlp_backward, test_mlp_backward_hidden


def mlp_backward(x, y, w1, w2, cache):
    """Gradients of l2_loss(mlp_forward(x, w1, w2)[0], y) with respect to w1 and w2."""
    h, h_relu, y_pred = cache
    grad_y_pred = 2.0 * (y_pred - y)
    grad_w2 = h_relu.T @ grad_y_pred
    grad_h_relu = grad_y_pred @ w2.T
    grad_h = grad_h_relu * (h > 0)
    grad_w1 = grad_h.T @ x
    return grad_w1, grad_w2
