"""jacobian_reverse builds the Jacobian from Jacobian-vector products: the wrong mode."""
# replaces: jacobian_reverse
# caught by: test_jacobian_reverse, test_jacobian_reverse_hidden


def jacobian_reverse(f, x):
    return torch.func.jacfwd(f)(x)
