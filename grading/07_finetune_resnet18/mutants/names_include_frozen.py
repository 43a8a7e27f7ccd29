"""trainable_parameter_names lists every parameter, forgetting to keep only those with requires_grad."""
# replaces: trainable_parameter_names
# caught by: test_trainable_parameter_names, test_trainable_parameter_names_hidden


def trainable_parameter_names(model):
    return [name for name, parameter in model.named_parameters()]
