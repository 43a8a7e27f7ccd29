"""get_device assumes a GPU: it returns cuda without asking torch.cuda.is_available()."""
# replaces: get_device
# caught by: test_get_device, test_get_device_hidden


def get_device():
    return torch.device("cuda")
