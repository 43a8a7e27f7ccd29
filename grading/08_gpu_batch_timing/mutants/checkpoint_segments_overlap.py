"""Each segment runs through its next boundary's layer too (model[start:end + 1]): that layer runs twice."""
# replaces: checkpointed_forward
# caught by: test_checkpointed_forward, test_checkpointed_forward_hidden


def checkpointed_forward(model, x, boundaries):
    ends = list(boundaries[1:]) + [len(model)]
    h = x
    for i, (start, end) in enumerate(zip(boundaries, ends)):
        if i == len(ends) - 1:
            h = model[start:end](h)
        else:
            h = checkpoint(model[start:end + 1], h, use_reentrant=False)
    return h
