"""Sigmoid's derivative with the wrong sign: grad_y * s * (1 + s) instead of grad_y * s * (1 - s)."""
# replaces: Sigmoid
# caught by: test_Sigmoid, test_Sigmoid_hidden
class Sigmoid(torch.autograd.Function):
    """y = 1 / (1 + exp(-x)), elementwise; forward saves its OUTPUT y for backward."""

    @staticmethod
    def forward(ctx, x):
        y = 1 / (1 + torch.exp(-x))
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad_y):
        (y,) = ctx.saved_tensors
        return grad_y * y * (1 + y)
