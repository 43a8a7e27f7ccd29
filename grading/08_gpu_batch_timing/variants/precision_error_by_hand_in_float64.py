"""precision_error with its own autocast block and the norms written out in float64."""
# exercise: precision_error


def precision_error(model, x, device, dtype):
    with torch.inference_mode():
        reference = model(x).double()
        with torch.autocast(device.type, dtype):
            low = model(x)
    difference = low.double() - reference
    return ((difference ** 2).sum() / (reference ** 2).sum()).sqrt().item()
