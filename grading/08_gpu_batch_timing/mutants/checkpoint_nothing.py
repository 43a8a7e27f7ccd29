"""checkpointed_forward runs the model as it is: the output and gradients are right, but the forward pass keeps every activation."""
# replaces: checkpointed_forward
# caught by: test_checkpointed_forward, test_checkpointed_forward_hidden


def checkpointed_forward(model, x, boundaries):
    return model(x)
