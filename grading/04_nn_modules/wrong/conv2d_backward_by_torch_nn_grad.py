"""conv2d_backward by torch.nn.grad.conv2d_input and conv2d_weight: PyTorch's own convolution backward, not derived."""
# exercise: conv2d_backward
# message: convolution_backward

import torch.nn.grad


def conv2d_backward(grad_out, x, weight, stride=1, padding=0):
    grad_x = torch.nn.grad.conv2d_input(x.shape, weight, grad_out, stride=stride, padding=padding)
    grad_weight = torch.nn.grad.conv2d_weight(x, weight.shape, grad_out, stride=stride, padding=padding)
    return grad_x, grad_weight, grad_out.sum(dim=(0, 2, 3))
