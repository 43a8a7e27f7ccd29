"""LayerNorm in the newer style (forward without ctx, setup_context), the chain rule kept in steps
(dL/dx_hat, dL/dvar, dL/dmean, as cs231n's batch-norm notes go), gamma's and beta's gradients summed
to their shape with sum_to_size: the same answer."""
# exercise: LayerNorm


class LayerNorm(torch.autograd.Function):
    @staticmethod
    def forward(x, gamma, beta, eps=1e-5):
        mean = x.mean(-1, keepdim=True)
        var = ((x - mean) ** 2).mean(-1, keepdim=True)
        return gamma * (x - mean) / torch.sqrt(var + eps) + beta

    @staticmethod
    def setup_context(ctx, inputs, output):
        x, gamma, beta, eps = inputs
        ctx.save_for_backward(x, gamma)
        ctx.eps = eps

    @staticmethod
    def backward(ctx, grad_y):
        x, gamma = ctx.saved_tensors
        d = x.shape[-1]
        mean = x.mean(-1, keepdim=True)
        var = ((x - mean) ** 2).mean(-1, keepdim=True)
        std = torch.sqrt(var + ctx.eps)
        x_hat = (x - mean) / std
        grad_x_hat = grad_y * gamma
        grad_var = (grad_x_hat * (x - mean) * -0.5 * std ** -3).sum(-1, keepdim=True)
        grad_mean = (-grad_x_hat / std).sum(-1, keepdim=True) + grad_var * (-2 * (x - mean)).mean(-1, keepdim=True)
        grad_x = grad_x_hat / std + grad_var * 2 * (x - mean) / d + grad_mean / d
        return grad_x, (grad_y * x_hat).sum_to_size(gamma.shape), grad_y.sum_to_size(gamma.shape), None
