"""to_device moves tensors and dicts but returns tuples and lists as they are, tensors inside left behind."""
# replaces: to_device
# caught by: test_to_device, test_to_device_hidden


def to_device(batch, device):
    if isinstance(batch, torch.Tensor):
        return batch.to(device)
    if isinstance(batch, dict):
        return {key: to_device(value, device) for key, value in batch.items()}
    return batch
