"""l2_loss averages the squared errors (mean, as mse_loss does by default) instead of summing them."""
# replaces: l2_loss
# caught by: test_l2_loss, test_l2_loss_hidden


def l2_loss(y_pred, y):
    """Sum of squared errors over every element: sum of (y_pred - y) ** 2."""
    return float(np.mean((y_pred - y) ** 2))
