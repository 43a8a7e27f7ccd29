"""The absolute error ||y_low - y_32||, not divided by ||y_32||: it grows with the scale of the outputs."""
# replaces: precision_error
# caught by: test_precision_error, test_precision_error_hidden


def precision_error(model, x, device, dtype):
    with torch.no_grad():
        y_32 = model(x).float()
        y_low = autocast_forward(model, x, device, dtype).float()
    return float(torch.linalg.vector_norm(y_low - y_32))
