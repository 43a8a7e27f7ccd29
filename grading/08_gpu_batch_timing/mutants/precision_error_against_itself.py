"""The error measured against the low-precision output itself: both sides computed under autocast, always 0."""
# replaces: precision_error
# caught by: test_precision_error, test_precision_error_hidden


def precision_error(model, x, device, dtype):
    with torch.no_grad():
        y_32 = autocast_forward(model, x, device, dtype).float()
        y_low = autocast_forward(model, x, device, dtype).float()
    return float(torch.linalg.vector_norm(y_low - y_32) / torch.linalg.vector_norm(y_32))
