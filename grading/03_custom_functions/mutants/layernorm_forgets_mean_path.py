"""LayerNorm's backward leaves out the path through the mean: the mean of gamma * grad_y is not subtracted."""
# replaces: LayerNorm
# caught by: test_LayerNorm, test_LayerNorm_hidden


class LayerNorm(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, gamma, beta, eps=1e-5):
        mean = x.mean(dim=-1, keepdim=True)
        centered = x - mean
        var = (centered * centered).mean(dim=-1, keepdim=True)
        rstd = 1.0 / torch.sqrt(var + eps)
        x_hat = centered * rstd
        ctx.save_for_backward(x_hat, rstd, gamma)
        return gamma * x_hat + beta

    @staticmethod
    def backward(ctx, grad_y):
        x_hat, rstd, gamma = ctx.saved_tensors
        leading = tuple(range(grad_y.dim() - 1))
        grad_gamma = (grad_y * x_hat).sum(dim=leading)
        grad_beta = grad_y.sum(dim=leading)
        g = grad_y * gamma
        grad_x = rstd * (g - x_hat * (g * x_hat).mean(dim=-1, keepdim=True))
        return grad_x, grad_gamma, grad_beta, None
