"""Sigmoid saves its input x instead of its output and recomputes the sigmoid in backward."""
# replaces: Sigmoid
# caught by: test_Sigmoid_saves_output, test_Sigmoid_hidden
class Sigmoid(torch.autograd.Function):
    """y = 1 / (1 + exp(-x)), elementwise; forward saves its OUTPUT y for backward."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return 1 / (1 + torch.exp(-x))

    @staticmethod
    def backward(ctx, grad_y):
        (x,) = ctx.saved_tensors
        y = 1 / (1 + torch.exp(-x))
        return grad_y * y * (1 - y)
