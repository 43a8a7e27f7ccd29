"""pixels_as_rows by F.unfold with the patch as kernel and stride, then swapping the last two dimensions."""
# exercise: pixels_as_rows


def pixels_as_rows(images, patch=1):
    return torch.nn.functional.unfold(images, kernel_size=patch, stride=patch).transpose(1, 2)
