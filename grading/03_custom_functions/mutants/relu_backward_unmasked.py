"""ReLU's backward returns grad_y unmasked: gradient flows even where x < 0."""
# replaces: ReLU
# caught by: test_ReLU, test_ReLU_hidden, test_relu_training
class ReLU(torch.autograd.Function):
    """y = max(x, 0), elementwise; forward saves its INPUT x for backward."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x.clamp(min=0)

    @staticmethod
    def backward(ctx, grad_y):
        (x,) = ctx.saved_tensors
        return grad_y.clone()
