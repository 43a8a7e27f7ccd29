"""Linear computes all three gradients, then returns None where ctx.needs_input_grad is False: the work is done anyway."""
# exercise: Linear
# message: FLOPs


class Linear(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, w, b=None):
        ctx.save_for_backward(x, w)
        ctx.has_bias = b is not None
        y = x @ w.T
        return y if b is None else y + b

    @staticmethod
    def backward(ctx, grad_y):
        x, w = ctx.saved_tensors
        grads = (grad_y @ w, grad_y.T @ x, grad_y.sum(0) if ctx.has_bias else None)
        return tuple(g if needed else None for g, needed in zip(grads, ctx.needs_input_grad))
