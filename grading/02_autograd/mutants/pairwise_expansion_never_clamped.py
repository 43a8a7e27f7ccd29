"""pairwise_sq_distances by the expansion, left as rounding makes it: a row's distance to itself can come out negative."""
# replaces: pairwise_sq_distances
# caught by: test_pairwise_sq_distances, test_pairwise_sq_distances_hidden


def pairwise_sq_distances(a, b):
    return (a * a).sum(1, keepdim=True) - 2 * a @ b.T + (b * b).sum(1)
