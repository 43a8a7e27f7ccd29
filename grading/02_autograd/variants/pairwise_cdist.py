"""pairwise_sq_distances with torch.cdist, squared."""
# exercise: pairwise_sq_distances


def pairwise_sq_distances(a, b):
    return torch.cdist(a, b) ** 2
