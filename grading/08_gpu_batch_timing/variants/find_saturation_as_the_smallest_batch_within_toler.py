"""find_saturation as the smallest batch within tolerance of the best."""
# exercise: find_saturation

def find_saturation(results, tolerance=0.1):
    best = max(r["samples_per_second"] for r in results)
    return min(r["batch_size"] for r in results if r["samples_per_second"] >= best / (1 + tolerance))
