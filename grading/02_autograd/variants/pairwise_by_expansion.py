"""pairwise_sq_distances from |a|^2 + |b|^2 - 2 a b^T: a matrix product instead of an (n, m, d) difference."""
# exercise: pairwise_sq_distances


def pairwise_sq_distances(a, b):
    return (a * a).sum(1, keepdim=True) - 2 * a @ b.T + (b * b).sum(1)
