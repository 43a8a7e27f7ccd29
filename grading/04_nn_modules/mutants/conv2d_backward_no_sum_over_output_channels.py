"""conv2d_backward's grad_x takes only the first output channel's contribution instead of the sum over every output channel."""
# replaces: conv2d_backward
# caught by: test_conv2d_backward, test_conv2d_backward_hidden
def conv2d_backward(grad_out, x, weight, stride=1, padding=0):
    """The gradients of conv2d_forward(x, weight, bias, stride, padding) given grad_out = dL/d(out)."""
    n, c_out = grad_out.shape[:2]
    kh, kw = weight.shape[2:]
    cols = F.unfold(x, (kh, kw), padding=padding, stride=stride)
    g = grad_out.reshape(n, c_out, -1)
    grad_weight = (g @ cols.transpose(1, 2)).sum(0).reshape(weight.shape)
    grad_cols = weight.reshape(c_out, -1)[:1].T @ g[:, :1]
    grad_x = F.fold(grad_cols, x.shape[2:], (kh, kw), padding=padding, stride=stride)
    return grad_x, grad_weight, grad_out.sum((0, 2, 3))
