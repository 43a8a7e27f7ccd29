"""LogSoftmax with torch.logsumexp, saving the softmax probabilities instead of y: the same answer."""
# exercise: LogSoftmax


class LogSoftmax(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        y = x - x.logsumexp(-1, keepdim=True)
        ctx.save_for_backward(torch.exp(y))
        return y

    @staticmethod
    def backward(ctx, grad_y):
        (p,) = ctx.saved_tensors
        return grad_y - p * grad_y.sum(-1, keepdim=True)
