"""What the grader hands 01's functions in the kernel: a function to differentiate, and a list read as floats.

Stand-ins compute no property and no verdict (autograder/probes/__init__.py): they build inputs and hand
back what the student's objects yield. NumPy only, as the assignment.
"""

import numpy as np

from autograder.probes.stand_ins import floats  # noqa: F401 - the probe reaches it as k.given.floats


def sin_dot(c):
    """f(w) = sum(sin(w) * c), a function whose gradient is cos(w) * c."""
    c = np.array(c)
    return lambda w: float(np.sum(np.sin(w) * c))


def cube_sum():
    """f(w) = sum(w ** 3), a function whose gradient is 3 w ** 2 (and whose centered difference is 3 w ** 2 + eps ** 2)."""
    return lambda w: float(np.sum(np.asarray(w) ** 3))
