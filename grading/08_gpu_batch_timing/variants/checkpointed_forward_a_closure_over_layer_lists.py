"""checkpointed_forward with the segments as lists of layers run by a closure, and the last segment run by hand."""
# exercise: checkpointed_forward

def checkpointed_forward(model, x, boundaries):
    layers = list(model)
    cuts = [*boundaries, len(layers)]
    segments = [layers[a:b] for a, b in zip(cuts, cuts[1:])]

    def run(segment):
        def forward(h):
            for layer in segment:
                h = layer(h)
            return h
        return forward

    for segment in segments[:-1]:
        x = torch.utils.checkpoint.checkpoint(run(segment), x, use_reentrant=False)
    return run(segments[-1])(x)
