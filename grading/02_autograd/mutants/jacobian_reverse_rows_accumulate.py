"""jacobian_reverse reads each row from x.grad without clearing it: row i holds the sum of rows 0..i."""
# replaces: jacobian_reverse
# caught by: test_jacobian_reverse, test_jacobian_reverse_hidden


def jacobian_reverse(f, x):
    x = x.detach().requires_grad_(True)
    y = f(x)
    rows = []
    for i in range(y.numel()):
        y[i].backward(retain_graph=True)
        rows.append(x.grad.clone())
    return torch.stack(rows)
