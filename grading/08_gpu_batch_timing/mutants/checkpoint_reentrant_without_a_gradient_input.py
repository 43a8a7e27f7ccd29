"""The reentrant checkpoint (use_reentrant=True) on an input that needs no gradient: the first segment's parameters get none."""
# replaces: checkpointed_forward
# caught by: test_checkpointed_forward, test_checkpointed_forward_hidden


def checkpointed_forward(model, x, boundaries):
    import warnings

    ends = list(boundaries[1:]) + [len(model)]
    h = x
    for i, (start, end) in enumerate(zip(boundaries, ends)):
        if i == len(ends) - 1:
            h = model[start:end](h)
        else:
            with warnings.catch_warnings():  # "None of the inputs have requires_grad=True": the mistake, silenced
                warnings.simplefilter("ignore")
                h = checkpoint(model[start:end], h, use_reentrant=True)
    return h
