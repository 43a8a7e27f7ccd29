"""find_saturation returns the batch size with the highest samples/s, a point on the plateau chosen by noise."""
# replaces: find_saturation
# caught by: test_find_saturation, test_find_saturation_hidden


def find_saturation(results, tolerance=0.1):
    return max(results, key=lambda r: r["samples_per_second"])["batch_size"]
