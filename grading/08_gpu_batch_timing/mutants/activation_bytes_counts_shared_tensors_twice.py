"""activation_bytes counts a ReLU's output again as the next Linear's input: one tensor, stored once, counted twice."""
# replaces: activation_bytes
# caught by: test_activation_bytes, test_activation_bytes_hidden


def activation_bytes(model, batch_size, in_features):
    size = next(model.parameters()).element_size()
    total, width = 0, in_features
    for layer in model:
        if isinstance(layer, nn.Linear):
            total += batch_size * width * size
            width = layer.out_features
        elif isinstance(layer, (nn.ReLU, nn.Tanh)):
            total += batch_size * width * size
    return total
