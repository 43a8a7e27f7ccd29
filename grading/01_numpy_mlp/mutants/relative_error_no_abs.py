"""Relative error without absolute values: (a - b) / (a + b), wrong for negative numbers and opposite signs."""
# replaces: relative_error
# caught by: test_relative_error, test_relative_error_hidden


def relative_error(a, b):
    """The largest elementwise relative error: max over i of |a_i - b_i| / max(1e-8, |a_i| + |b_i|)."""
    return float(np.max((a - b) / np.maximum(1e-8, a + b)))
