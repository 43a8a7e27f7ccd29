"""count_parameters counts the state_dict: buffers and frozen parameters too."""
# exercise: count_parameters
# message: count_parameters

def count_parameters(model):
    return sum(t.numel() for t in model.state_dict().values())
