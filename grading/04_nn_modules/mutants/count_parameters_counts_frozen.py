"""count_parameters counts every parameter, frozen ones (requires_grad=False) included."""
# replaces: count_parameters
# caught by: test_count_parameters, test_count_parameters_hidden
def count_parameters(model):
    """The number of trainable scalars of model: elements of its parameters with requires_grad (an int)."""
    return sum(p.numel() for p in model.parameters())
