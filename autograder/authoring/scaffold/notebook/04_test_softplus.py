"""softplus matches log(1 + exp(x)) where exp cannot overflow."""
x_check = np.linspace(-5.0, 5.0, 11)
check_close(softplus(x_check), np.log(1.0 + np.exp(x_check)), "softplus(linspace(-5, 5))",
            hint="softplus(0) is log 2; for large x it approaches x, for very negative x it approaches 0")
passed("softplus")
