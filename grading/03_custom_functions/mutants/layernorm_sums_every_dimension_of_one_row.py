"""LayerNorm's grad_gamma sums over every dimension but the last with sum(dim=tuple), which for a single row (D,) is sum(dim=()): every dimension, a 0-d gradient."""
# replaces: LayerNorm
# caught by: test_LayerNorm, test_LayerNorm_hidden


class LayerNorm(torch.autograd.Function):
    """y = gamma * (x - mean) / sqrt(var + eps) + beta over the last dimension (biased variance, eps inside the root)."""

    @staticmethod
    def forward(ctx, x, gamma, beta, eps=1e-5):
        """x: (..., D), gamma: (D,), beta: (D,), eps: a float; returns y: (..., D), same dtype as x."""
        mean = x.mean(dim=-1, keepdim=True)
        centered = x - mean
        var = (centered * centered).mean(dim=-1, keepdim=True)
        rstd = 1.0 / torch.sqrt(var + eps)
        x_hat = centered * rstd
        ctx.save_for_backward(x_hat, rstd, gamma)
        return gamma * x_hat + beta

    @staticmethod
    def backward(ctx, grad_y):
        """grad_y: dL/dy, (..., D); returns (grad_x (..., D), grad_gamma (D,), grad_beta (D,), None for eps)."""
        x_hat, rstd, gamma = ctx.saved_tensors
        leading = tuple(range(grad_y.dim() - 1))
        grad_gamma = (grad_y * x_hat).sum(dim=leading)
        grad_beta = grad_y.sum(dim=leading)
        g = grad_y * gamma
        grad_x = rstd * (g - g.mean(dim=-1, keepdim=True) - x_hat * (g * x_hat).mean(dim=-1, keepdim=True))
        return grad_x, grad_gamma, grad_beta, None
