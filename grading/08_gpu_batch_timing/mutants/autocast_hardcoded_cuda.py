"""torch.autocast("cuda", ...) copied from a GPU tutorial: on a CPU it disables itself and nothing runs in bfloat16."""
# replaces: autocast_forward
# caught by: test_autocast_forward, test_autocast_forward_hidden


def autocast_forward(model, x, device, dtype):
    with torch.autocast("cuda", dtype=dtype):
        return model(x)
