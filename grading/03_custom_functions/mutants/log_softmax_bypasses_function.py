"""log_softmax(x) calls torch.log_softmax instead of LogSoftmax.apply: PyTorch's node, not the student's."""
# replaces: log_softmax
# caught by: test_log_softmax, test_log_softmax_hidden
def log_softmax(x):
    """log(softmax(x)) over the last dimension of x (any shape) through the custom Function: one LogSoftmax node."""
    return torch.log_softmax(x, dim=-1)
