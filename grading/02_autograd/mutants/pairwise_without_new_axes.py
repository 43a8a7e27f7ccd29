"""pairwise_sq_distances subtracts the two sets row by row (a - b): no size-1 dimensions, so no pairs."""
# replaces: pairwise_sq_distances
# caught by: test_pairwise_sq_distances


def pairwise_sq_distances(a, b):
    return ((a - b) ** 2).sum(dim=-1)
