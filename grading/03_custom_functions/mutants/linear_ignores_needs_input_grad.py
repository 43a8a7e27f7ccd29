"""Linear's backward computes every gradient, ignoring ctx.needs_input_grad (None only for a missing b)."""
# replaces: Linear
# caught by: test_Linear, test_Linear_hidden
class Linear(torch.autograd.Function):
    """y = x @ w.T + b, a linear layer; backward computes only the gradients ctx.needs_input_grad asks for."""

    @staticmethod
    def forward(ctx, x, w, b=None):
        ctx.save_for_backward(x, w)
        ctx.has_bias = b is not None
        y = x @ w.T
        return y if b is None else y + b

    @staticmethod
    def backward(ctx, grad_y):
        x, w = ctx.saved_tensors
        grad_b = grad_y.sum(0) if ctx.has_bias else None
        return grad_y @ w, grad_y.T @ x, grad_b
