"""conv2d_backward with einsum for both products, the bias gradient summed axis by axis, returned as a list."""
# exercise: conv2d_backward

def conv2d_backward(grad_out, x, weight, stride=1, padding=0):
    kh, kw = weight.shape[-2:]
    cols = F.unfold(x, kernel_size=(kh, kw), stride=stride, padding=padding)
    g = grad_out.flatten(2)
    grad_weight = torch.einsum("nol,nkl->ok", g, cols).view_as(weight)
    grad_cols = torch.einsum("ok,nol->nkl", weight.flatten(1), g)
    grad_x = F.fold(grad_cols, output_size=tuple(x.shape[-2:]), kernel_size=(kh, kw), stride=stride, padding=padding)
    return (grad_x, grad_weight, grad_out.sum(0).sum(-1).sum(-1))
