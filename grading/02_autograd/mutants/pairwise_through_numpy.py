"""pairwise_sq_distances by the expansion in NumPy, brought back with torch.from_numpy: the graph is cut, no gradient reaches a or b."""
# replaces: pairwise_sq_distances
# caught by: test_pairwise_sq_distances


def pairwise_sq_distances(a, b):
    a_np, b_np = a.detach().cpu().numpy(), b.detach().cpu().numpy()
    out = (a_np ** 2).sum(1)[:, None] - 2 * a_np @ b_np.T + (b_np ** 2).sum(1)[None, :]
    return torch.from_numpy(out).clamp(min=0)
