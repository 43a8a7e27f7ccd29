"""LogSoftmax's backward asks autograd for F.log_softmax's gradient on a detached copy of its saved input."""
# exercise: LogSoftmax
# message: asks autograd for the gradient it should derive


class LogSoftmax(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        shifted = x - x.amax(dim=-1, keepdim=True)
        return shifted - shifted.exp().sum(dim=-1, keepdim=True).log()

    @staticmethod
    def backward(ctx, grad_y):
        (x,) = ctx.saved_tensors
        with torch.enable_grad():
            x = x.detach().requires_grad_()
            (grad_x,) = torch.autograd.grad(torch.nn.functional.log_softmax(x, -1), x, grad_y)
        return grad_x
