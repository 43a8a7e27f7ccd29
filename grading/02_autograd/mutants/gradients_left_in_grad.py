"""autograd_gradients returns w1.grad and w2.grad but never clears them, so they accumulate across calls."""
# replaces: autograd_gradients
# caught by: test_autograd_gradients, test_autograd_gradients_hidden


def autograd_gradients(x, y, w1, w2):
    """Gradients of sum((torch_mlp_forward(x, w1, w2) - y) ** 2) with respect to w1 and w2, by loss.backward()."""
    loss = ((torch_mlp_forward(x, w1, w2) - y) ** 2).sum()
    loss.backward()
    return w1.grad, w2.grad
