"""activation_bytes assumes 4 bytes a number: a float64 model's activations take twice that."""
# replaces: activation_bytes
# caught by: test_activation_bytes


def activation_bytes(model, batch_size, in_features):
    kept, width, source = set(), in_features, "input"
    for index, layer in enumerate(model):
        if isinstance(layer, nn.Linear):
            kept.add((source, width))
            width, source = layer.out_features, index
        elif isinstance(layer, (nn.ReLU, nn.Tanh)):
            source = index
            kept.add((source, width))
    return batch_size * 4 * sum(w for _, w in kept)
