"""pixels_as_rows moves the channels last but swaps height and width: pixels in column-major order."""
# replaces: pixels_as_rows
# caught by: test_pixels_as_rows, test_pixels_as_rows_hidden


def pixels_as_rows(images):
    n, c, h, w = images.shape
    return images.permute(0, 3, 2, 1).reshape(n, h * w, c)
