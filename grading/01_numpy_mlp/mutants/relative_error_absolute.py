"""Absolute instead of relative error: max |a - b| with no denominator, so the answer depends on the scale."""
# replaces: relative_error
# caught by: test_relative_error, test_relative_error_hidden


def relative_error(a, b):
    """The largest elementwise relative error: max over i of |a_i - b_i| / max(1e-8, |a_i| + |b_i|)."""
    return float(np.max(np.abs(a - b)))
