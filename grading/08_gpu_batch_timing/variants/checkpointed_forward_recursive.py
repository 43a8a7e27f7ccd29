"""checkpointed_forward by recursion: checkpoint the first segment, then the rest of the model from the next boundary."""
# exercise: checkpointed_forward

def checkpointed_forward(model, x, boundaries):
    if len(boundaries) == 1:
        return model[boundaries[0]:](x)
    start, end = boundaries[0], boundaries[1]
    h = checkpoint(torch.nn.Sequential(*list(model)[start:end]), x, use_reentrant=False)
    return checkpointed_forward(model, h, list(boundaries[1:]))
