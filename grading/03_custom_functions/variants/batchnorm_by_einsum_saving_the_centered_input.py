"""BatchNorm with the per-channel sums written as einsum over every axis but the channels', saving the centered
input and the standard deviation rather than x_hat."""
# exercise: BatchNorm


class BatchNorm(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, gamma, beta, running_mean=None, running_var=None, momentum=0.1, eps=1e-5):
        spec = "nc...->c"
        count = x.numel() / x.shape[1]
        view = (1, -1) + (1,) * (x.dim() - 2)
        mean = torch.einsum(spec, x) / count
        centered = x - mean.view(view)
        var = torch.einsum(spec, centered * centered) / count
        std = (var + eps).sqrt()
        if running_mean is not None:
            running_mean.lerp_(mean, momentum)
        if running_var is not None:
            running_var.lerp_(var * count / (count - 1), momentum)
        ctx.save_for_backward(centered, std, gamma)
        return centered / std.view(view) * gamma.view(view) + beta.view(view)

    @staticmethod
    def backward(ctx, grad_y):
        centered, std, gamma = ctx.saved_tensors
        spec, count = "nc...->c", grad_y.numel() / grad_y.shape[1]
        view = (1, -1) + (1,) * (grad_y.dim() - 2)
        x_hat = centered / std.view(view)
        grad_gamma = torch.einsum(spec, grad_y * x_hat)
        grad_beta = torch.einsum(spec, grad_y)
        grad_x = (gamma / std).view(view) * (grad_y - (grad_beta / count).view(view)
                                             - x_hat * (grad_gamma / count).view(view))
        return grad_x, grad_gamma, grad_beta, None, None, None, None
