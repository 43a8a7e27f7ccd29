"""ReLU's backward asks autograd for torch.relu's gradient on a detached copy of its saved input."""
# exercise: ReLU
# message: asks autograd for the gradient it should derive


class ReLU(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x.clamp(min=0)

    @staticmethod
    def backward(ctx, grad_y):
        (x,) = ctx.saved_tensors
        with torch.enable_grad():
            x = x.detach().requires_grad_()
            (grad_x,) = torch.autograd.grad(torch.relu(x), x, grad_y)
        return grad_x
