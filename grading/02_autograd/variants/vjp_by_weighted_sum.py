"""vector_jacobian_product as the gradient of (f(x) * v).sum(), by autograd.grad."""
# exercise: vector_jacobian_product


def vector_jacobian_product(f, x, v):
    leaf = x.detach().clone().requires_grad_()
    return torch.autograd.grad((f(leaf) * v).sum(), leaf)[0]
