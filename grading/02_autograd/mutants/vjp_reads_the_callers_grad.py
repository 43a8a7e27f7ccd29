"""vector_jacobian_product makes the caller's x require grad and reads x.grad: a second call adds to the first."""
# replaces: vector_jacobian_product
# caught by: test_vector_jacobian_product, test_vector_jacobian_product_hidden


def vector_jacobian_product(f, x, v):
    x.requires_grad_(True)
    f(x).backward(v)
    return x.grad
