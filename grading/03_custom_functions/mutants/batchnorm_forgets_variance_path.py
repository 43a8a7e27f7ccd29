"""BatchNorm's grad_x leaves out the path through the channel's variance."""
# replaces: BatchNorm
# caught by: test_BatchNorm, test_BatchNorm_hidden


class BatchNorm(torch.autograd.Function):
    """Batch normalization in training mode: each channel normalized with its statistics over the batch (and every
    position); updates the running statistics it is handed, in place, as nn.BatchNorm does."""

    @staticmethod
    def forward(ctx, x, gamma, beta, running_mean=None, running_var=None, momentum=0.1, eps=1e-5):
        """x: (N, C) or (N, C, H, W) (any number of dimensions after C); gamma, beta: (C,); running_mean and
        running_var: (C,) tensors updated in place, or None; momentum, eps: floats. Returns y: x's shape and dtype."""
        dims = [0, *range(2, x.dim())]  # every dimension but the channels'
        per_channel = [1, -1] + [1] * (x.dim() - 2)  # a (C,) vector against x
        m = x.numel() // x.shape[1]  # values behind each channel's statistics
        mean = x.mean(dim=dims, keepdim=True)
        centered = x - mean
        var = (centered * centered).mean(dim=dims, keepdim=True)
        rstd = 1.0 / torch.sqrt(var + eps)
        x_hat = centered * rstd
        if running_mean is not None:
            running_mean.mul_(1 - momentum).add_(momentum * mean.reshape(-1))
        if running_var is not None:
            running_var.mul_(1 - momentum).add_(momentum * m / (m - 1) * var.reshape(-1))
        ctx.save_for_backward(x_hat, rstd, gamma)
        return gamma.reshape(per_channel) * x_hat + beta.reshape(per_channel)

    @staticmethod
    def backward(ctx, grad_y):
        """grad_y: dL/dy, x's shape; returns (grad_x, grad_gamma (C,), grad_beta (C,), and None for running_mean,
        running_var, momentum and eps)."""
        x_hat, rstd, gamma = ctx.saved_tensors
        dims = [0, *range(2, grad_y.dim())]
        g = grad_y * gamma.reshape([1, -1] + [1] * (grad_y.dim() - 2))
        grad_x = rstd * (g - g.mean(dim=dims, keepdim=True))
        return grad_x, (grad_y * x_hat).sum(dim=dims), grad_y.sum(dim=dims), None, None, None, None
