"""relu clips its input in place (h[h < 0] = 0), destroying the pre-activation the backward pass needs."""
# replaces: relu
# caught by: test_relu


def relu(h):
    """max(h, 0) elementwise."""
    h[h < 0] = 0
    return h
