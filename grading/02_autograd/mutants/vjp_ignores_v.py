"""vector_jacobian_product differentiates f(x).sum(): v is ignored (every output weighted by 1)."""
# replaces: vector_jacobian_product
# caught by: test_vector_jacobian_product, test_vector_jacobian_product_hidden


def vector_jacobian_product(f, x, v):
    x = x.detach().requires_grad_(True)
    f(x).sum().backward()
    return x.grad
