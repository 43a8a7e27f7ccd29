"""Sigmoid saves its input and plugs x into the derivative formula: grad_y * x * (1 - x)."""
# replaces: Sigmoid
# caught by: test_Sigmoid, test_Sigmoid_saves_output, test_Sigmoid_hidden
class Sigmoid(torch.autograd.Function):
    """y = 1 / (1 + exp(-x)), elementwise; forward saves its OUTPUT y for backward."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return 1 / (1 + torch.exp(-x))

    @staticmethod
    def backward(ctx, grad_y):
        (x,) = ctx.saved_tensors
        return grad_y * x * (1 - x)
