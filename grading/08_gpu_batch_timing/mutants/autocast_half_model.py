"""The model cast with .half() instead of autocast: the weights are float16 for good, and the output is not bfloat16."""
# replaces: autocast_forward
# caught by: test_autocast_forward, test_autocast_forward_hidden


def autocast_forward(model, x, device, dtype):
    return model.half()(x.half())
