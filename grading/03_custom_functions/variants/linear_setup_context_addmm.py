"""Linear in the newer style (forward without ctx, setup_context), addmm, and grad_b as a product with ones."""
# exercise: Linear


class Linear(torch.autograd.Function):
    @staticmethod
    def forward(x, w, b=None):
        return x.matmul(w.t()) if b is None else torch.addmm(b, x, w.t())

    @staticmethod
    def setup_context(ctx, inputs, output):
        x, w = inputs[:2]
        ctx.save_for_backward(x, w)

    @staticmethod
    def backward(ctx, grad_y):
        x, w = ctx.saved_tensors
        grad_x = torch.mm(grad_y, w) if ctx.needs_input_grad[0] else None
        grad_w = torch.mm(grad_y.t(), x) if ctx.needs_input_grad[1] else None
        grad_b = None
        if ctx.needs_input_grad[2]:
            grad_b = torch.mm(torch.ones(1, grad_y.shape[0], dtype=grad_y.dtype), grad_y).squeeze(0)
        return grad_x, grad_w, grad_b
