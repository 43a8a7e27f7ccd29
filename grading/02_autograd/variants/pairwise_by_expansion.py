"""pairwise_sq_distances from |a|^2 + |b|^2 - 2 a b^T with torch.addmm and relu for the floor: no (n, m, d) difference."""
# exercise: pairwise_sq_distances


def pairwise_sq_distances(a, b):
    norms = a.pow(2).sum(1).unsqueeze(1) + b.pow(2).sum(1).unsqueeze(0)  # (n, m)
    return torch.relu(torch.addmm(norms, a, b.T, alpha=-2))
