"""Linear with einsum, x and w kept as ctx attributes, and the flags read one by one: the same answer."""
# exercise: Linear


class Linear(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, w, b=None):
        ctx.x, ctx.w = x, w
        y = torch.einsum("ni,oi->no", x, w)
        if b is not None:
            y += b
        return y

    @staticmethod
    def backward(ctx, grad_y):
        grads = [None, None, None]
        if ctx.needs_input_grad[0]:
            grads[0] = torch.einsum("no,oi->ni", grad_y, ctx.w)
        if ctx.needs_input_grad[1]:
            grads[1] = torch.einsum("no,ni->oi", grad_y, ctx.x)
        if ctx.needs_input_grad[2]:
            grads[2] = grad_y.sum(dim=0)
        return tuple(grads)
