"""get_device returns a string, not a torch.device."""
# exercise: get_device
# message: is_device

def get_device():
    return "cuda" if torch.cuda.is_available() else "mps" if torch.backends.mps.is_available() else "cpu"
