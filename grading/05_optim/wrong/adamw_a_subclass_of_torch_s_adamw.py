"""AdamW is torch.optim.AdamW under another name: the update is PyTorch's, not written."""
# exercise: AdamW
# message: torch.optim's own

class AdamW(torch.optim.AdamW):
    pass
