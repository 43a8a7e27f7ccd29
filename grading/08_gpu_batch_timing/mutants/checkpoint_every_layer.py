"""Every layer of the checkpointed segments checkpointed on its own: the forward keeps each layer's input, a Linear's output too."""
# replaces: checkpointed_forward
# caught by: test_checkpointed_forward


def checkpointed_forward(model, x, boundaries):
    last = boundaries[-1]
    h = x
    for layer in model[:last]:
        h = checkpoint(layer, h, use_reentrant=False)
    return model[last:](h)
