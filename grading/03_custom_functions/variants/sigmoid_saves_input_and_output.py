"""Sigmoid saving its input and its output: wasteful, not wrong; the output is among what it saved."""
# exercise: Sigmoid


class Sigmoid(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        y = torch.sigmoid(x)
        ctx.save_for_backward(x, y)
        return y

    @staticmethod
    def backward(ctx, grad_y):
        _, y = ctx.saved_tensors
        return grad_y * y * (1 - y)
