"""Linear's backward returns (grad_x, grad_w) and forgets b's place: one value per input of forward is needed."""
# replaces: Linear
# caught by: test_Linear, test_Linear_hidden
class Linear(torch.autograd.Function):
    """y = x @ w.T + b, a linear layer; backward computes only the gradients ctx.needs_input_grad asks for."""

    @staticmethod
    def forward(ctx, x, w, b=None):
        ctx.save_for_backward(x, w)
        y = x @ w.T
        return y if b is None else y + b

    @staticmethod
    def backward(ctx, grad_y):
        x, w = ctx.saved_tensors
        grad_x = grad_y @ w if ctx.needs_input_grad[0] else None
        grad_w = grad_y.T @ x if ctx.needs_input_grad[1] else None
        return grad_x, grad_w
