"""jacobian_forward stacks its Jacobian-vector products as rows: the transpose, (n, m)."""
# replaces: jacobian_forward
# caught by: test_jacobian_forward, test_jacobian_forward_hidden


def jacobian_forward(f, x):
    basis = torch.eye(x.numel(), dtype=x.dtype)
    return torch.stack([torch.func.jvp(f, (x,), (e,))[1] for e in basis])
