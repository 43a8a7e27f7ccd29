"""Hidden: softplus far out in both tails, where exp(x) overflows float64."""
pass  # Hidden tests: the autograder runs them when it grades the notebook; in your copy this cell does nothing.
### BEGIN HIDDEN TESTS
x_tails = np.array([-800.0, -40.0, 40.0, 800.0])
check_close(softplus(x_tails), np.array([0.0, np.exp(-40.0), 40.0 + np.exp(-40.0), 800.0]),
            "softplus([-800, -40, 40, 800])", hint="never compute exp of a large positive number")
### END HIDDEN TESTS
