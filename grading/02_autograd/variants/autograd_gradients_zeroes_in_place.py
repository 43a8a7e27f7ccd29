"""autograd_gradients zeroing .grad in place before and after, returning clones."""
# exercise: autograd_gradients


def autograd_gradients(x, y, w1, w2):
    for w in (w1, w2):
        if w.grad is not None:
            w.grad.zero_()
    ((torch_mlp_forward(x, w1, w2) - y).pow(2).sum()).backward()
    grads = w1.grad.clone(), w2.grad.clone()
    w1.grad.zero_()
    w2.grad.zero_()
    return grads
