"""pairwise_sq_distances sums the squared differences over the rows of a instead of the coordinates."""
# replaces: pairwise_sq_distances
# caught by: test_pairwise_sq_distances


def pairwise_sq_distances(a, b):
    return ((a[:, None, :] - b[None, :, :]) ** 2).sum(dim=0)
