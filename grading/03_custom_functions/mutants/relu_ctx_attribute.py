"""ReLU keeps its input as an attribute (ctx.x = x) instead of ctx.save_for_backward."""
# replaces: ReLU
# caught by: test_ReLU_saves_input, test_ReLU_hidden
class ReLU(torch.autograd.Function):
    """y = max(x, 0), elementwise; forward saves its INPUT x for backward."""

    @staticmethod
    def forward(ctx, x):
        ctx.x = x
        return x.clamp(min=0)

    @staticmethod
    def backward(ctx, grad_y):
        grad_x = grad_y.clone()
        grad_x[ctx.x < 0] = 0
        return grad_x
