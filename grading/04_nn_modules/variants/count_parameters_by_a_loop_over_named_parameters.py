"""count_parameters by a loop over named_parameters."""
# exercise: count_parameters

def count_parameters(model):
    total = 0
    for _, p in model.named_parameters():
        total += p.numel() if p.requires_grad else 0
    return total
