"""to_numpy forgets .cpu(): fine on the CPU, a TypeError for any tensor on a GPU."""
# replaces: to_numpy
# caught by: test_to_numpy


def to_numpy(t):
    """A NumPy array with t's values, shape and dtype, for a tensor on any device, requiring grad or not."""
    return t.detach().numpy()
