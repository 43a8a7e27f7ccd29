"""get_device in one conditional expression."""
# exercise: get_device

def get_device():
    return torch.device("cuda" if torch.cuda.is_available() else "mps" if torch.backends.mps.is_available() else "cpu")
