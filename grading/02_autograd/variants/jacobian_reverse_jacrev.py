"""jacobian_reverse with torch.func.jacrev."""
# exercise: jacobian_reverse


def jacobian_reverse(f, x):
    return torch.func.jacrev(f)(x)
