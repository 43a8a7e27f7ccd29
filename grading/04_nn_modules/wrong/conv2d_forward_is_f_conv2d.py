"""conv2d_forward is F.conv2d: the right numbers, but PyTorch's convolution, not unfold and one matrix product."""
# exercise: conv2d_forward
# message: called PyTorch's convolution

def conv2d_forward(x, weight, bias=None, stride=1, padding=0):
    return F.conv2d(x, weight, bias, stride=stride, padding=padding)
