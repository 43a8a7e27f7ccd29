"""pixels_as_rows reshapes (N, C, H, W) straight to (N, rows, C * p * p): the right shape, values read in memory order."""
# replaces: pixels_as_rows
# caught by: test_pixels_as_rows, test_pixels_as_rows_hidden


def pixels_as_rows(images, patch=1):
    n, c, h, w = images.shape
    return images.reshape(n, (h // patch) * (w // patch), c * patch * patch)
