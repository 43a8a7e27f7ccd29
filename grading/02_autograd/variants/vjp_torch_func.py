"""vector_jacobian_product with torch.func.vjp."""
# exercise: vector_jacobian_product


def vector_jacobian_product(f, x, v):
    _, vjp_fn = torch.func.vjp(f, x)
    return vjp_fn(v)[0]
