"""to_numpy calls .numpy() without .detach(): RuntimeError on any tensor that requires grad."""
# replaces: to_numpy
# caught by: test_to_numpy


def to_numpy(t):
    """A NumPy array with t's values, shape and dtype, for a tensor on any device, requiring grad or not."""
    return t.cpu().numpy()
