"""conv2d_backward asks autograd: the student's own unfold forward on detached copies, then torch.autograd.grad."""
# exercise: conv2d_backward
# message: asks autograd for the gradients it should derive


def conv2d_backward(grad_out, x, weight, stride=1, padding=0):
    with torch.enable_grad():
        x, weight = x.detach().requires_grad_(), weight.detach().requires_grad_()
        bias = torch.zeros(weight.shape[0], dtype=x.dtype, requires_grad=True)
        out = conv2d_forward(x, weight, bias, stride=stride, padding=padding)
        return torch.autograd.grad(out, (x, weight, bias), grad_out)
