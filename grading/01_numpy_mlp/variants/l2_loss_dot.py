"""l2_loss as a dot product of the flattened error with itself."""
# exercise: l2_loss


def l2_loss(y_pred, y):
    error = (y_pred - y).ravel()
    return float(error @ error)
