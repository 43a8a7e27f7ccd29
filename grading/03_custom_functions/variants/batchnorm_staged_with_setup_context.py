"""BatchNorm in the newer style (forward without ctx, setup_context saving x), the channels moved to the front and
flattened to (C, M), the chain rule kept in steps (dL/dx_hat, dL/dvar, dL/dmean, as cs231n's notes go)."""
# exercise: BatchNorm


class BatchNorm(torch.autograd.Function):
    @staticmethod
    def forward(x, gamma, beta, running_mean=None, running_var=None, momentum=0.1, eps=1e-5):
        flat = x.movedim(1, 0).reshape(x.shape[1], -1)  # (C, M)
        mean, var = flat.mean(1), flat.var(1, unbiased=False)
        with torch.no_grad():
            if running_mean is not None:
                running_mean.copy_((1 - momentum) * running_mean + momentum * mean)
            if running_var is not None:
                running_var.copy_((1 - momentum) * running_var + momentum * flat.var(1, unbiased=True))
        y = gamma[:, None] * (flat - mean[:, None]) / torch.sqrt(var[:, None] + eps) + beta[:, None]
        return y.reshape(x.movedim(1, 0).shape).movedim(0, 1)

    @staticmethod
    def setup_context(ctx, inputs, output):
        x, gamma, *_, eps = inputs
        ctx.save_for_backward(x, gamma)
        ctx.eps = eps

    @staticmethod
    def backward(ctx, grad_y):
        x, gamma = ctx.saved_tensors
        c = x.shape[1]
        flat, g = (t.movedim(1, 0).reshape(c, -1) for t in (x, grad_y))  # (C, M)
        m = flat.shape[1]
        mean = flat.mean(1, keepdim=True)
        var = ((flat - mean) ** 2).mean(1, keepdim=True)
        std = torch.sqrt(var + ctx.eps)
        x_hat = (flat - mean) / std
        grad_x_hat = g * gamma[:, None]
        grad_var = (grad_x_hat * (flat - mean) * -0.5 * std ** -3).sum(1, keepdim=True)
        grad_mean = (-grad_x_hat / std).sum(1, keepdim=True) + grad_var * (-2 * (flat - mean)).mean(1, keepdim=True)
        grad_flat = grad_x_hat / std + grad_var * 2 * (flat - mean) / m + grad_mean / m
        grad_x = grad_flat.reshape(x.movedim(1, 0).shape).movedim(0, 1)
        return grad_x, (g * x_hat).sum(1), g.sum(1), None, None, None, None
