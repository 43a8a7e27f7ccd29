"""relu through np.where instead of np.maximum: a new array, the input's dtype."""
# exercise: relu


def relu(h):
    return np.where(h > 0, h, 0).astype(h.dtype)
