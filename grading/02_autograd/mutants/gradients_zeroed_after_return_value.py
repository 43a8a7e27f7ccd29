"""autograd_gradients zeroes .grad in place after taking it, which zeroes the very tensors it returns."""
# replaces: autograd_gradients
# caught by: test_autograd_gradients, test_autograd_gradients_hidden


def autograd_gradients(x, y, w1, w2):
    """Gradients of sum((torch_mlp_forward(x, w1, w2) - y) ** 2) with respect to w1 and w2, by loss.backward()."""
    loss = ((torch_mlp_forward(x, w1, w2) - y) ** 2).sum()
    loss.backward()
    grad_w1, grad_w2 = w1.grad, w2.grad
    w1.grad.zero_()
    w2.grad.zero_()
    return grad_w1, grad_w2
