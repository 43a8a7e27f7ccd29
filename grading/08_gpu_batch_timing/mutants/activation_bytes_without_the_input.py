"""activation_bytes leaves out the batch itself, which the first Linear keeps for its weight's gradient."""
# replaces: activation_bytes
# caught by: test_activation_bytes, test_activation_bytes_hidden


def activation_bytes(model, batch_size, in_features):
    size = next(model.parameters()).element_size()
    kept, width, source = set(), in_features, "input"
    for index, layer in enumerate(model):
        if isinstance(layer, nn.Linear):
            if source != "input":
                kept.add((source, width))
            width, source = layer.out_features, index
        elif isinstance(layer, (nn.ReLU, nn.Tanh)):
            source = index
            kept.add((source, width))
    return batch_size * size * sum(w for _, w in kept)
