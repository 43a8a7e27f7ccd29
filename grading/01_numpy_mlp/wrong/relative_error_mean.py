"""relative_error averages the elementwise errors instead of taking the largest: hides one bad entry."""
# exercise: relative_error
# message: relative_error: error differs


def relative_error(a, b):
    return float(np.mean(np.abs(a - b) / np.maximum(1e-8, np.abs(a) + np.abs(b))))
