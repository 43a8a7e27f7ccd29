"""pixels_as_rows lists a patch's values pixel by pixel, each pixel's channels together (row, column, channel): another order than a kernel's weight."""
# replaces: pixels_as_rows
# caught by: test_pixels_as_rows, test_pixels_as_rows_hidden


def pixels_as_rows(images, patch=1):
    n, c, h, w = images.shape
    p = patch
    return images.reshape(n, c, h // p, p, w // p, p).permute(0, 2, 4, 3, 5, 1).reshape(n, -1, c * p * p)
