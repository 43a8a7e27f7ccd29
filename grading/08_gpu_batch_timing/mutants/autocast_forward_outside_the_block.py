"""The forward pass after the with block: autocast is already off when model(x) runs."""
# replaces: autocast_forward
# caught by: test_autocast_forward, test_autocast_forward_hidden


def autocast_forward(model, x, device, dtype):
    with torch.autocast(device_type=device.type, dtype=dtype):
        pass
    return model(x)
