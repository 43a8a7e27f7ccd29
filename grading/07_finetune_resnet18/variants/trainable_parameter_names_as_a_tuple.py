"""trainable_parameter_names as a tuple."""
# exercise: trainable_parameter_names

def trainable_parameter_names(model):
    return tuple(name for name, parameter in model.named_parameters() if parameter.requires_grad is True)
