"""Linear's grad_b is grad_y itself, (N, D_out), not summed over the batch (autograd would sum it silently)."""
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
        needs_x, needs_w, needs_b = ctx.needs_input_grad
        grad_x = grad_y @ w if needs_x else None
        grad_w = grad_y.T @ x if needs_w else None
        grad_b = grad_y if needs_b else None
        return grad_x, grad_w, grad_b
