"""The slides' backward pass, h_relu.T @ grad_y_pred and x.T @ grad_h: right for rows of examples, and on a batch of sequences .T reverses all three axes."""
# replaces: mlp_backward
# caught by: test_mlp_backward, test_mlp_backward_hidden


def mlp_backward(x, y, w1, w2, cache):
    """Gradients of l2_loss(mlp_forward(x, w1, w2)[0], y) with respect to w1 and w2."""
    h, h_relu, y_pred = cache
    grad_y_pred = 2.0 * (y_pred - y)
    grad_w2 = h_relu.T @ grad_y_pred
    grad_h = (grad_y_pred @ w2.T) * (h > 0)
    grad_w1 = x.T @ grad_h
    return grad_w1, grad_w2
