"""torch.autocast(device.type) without dtype=: autocast's default (float16 on CUDA, bfloat16 on a CPU), whatever dtype asks for."""
# replaces: autocast_forward
# caught by: test_autocast_forward, test_autocast_forward_hidden


def autocast_forward(model, x, device, dtype):
    with torch.autocast(device.type):
        return model(x)
