"""conv2d_backward without F.fold: for each kernel offset (u, v), einsum the gradients and add them into a padded grad_x by strided slices."""
# exercise: conv2d_backward

def conv2d_backward(grad_out, x, weight, stride=1, padding=0):
    n, c_in, h, w = x.shape
    c_out, _, kh, kw = weight.shape
    h_out, w_out = grad_out.shape[2:]
    padded = F.pad(x, (padding,) * 4)
    grad_padded = torch.zeros_like(padded)
    grad_weight = torch.zeros_like(weight)
    for u in range(kh):
        for v in range(kw):
            window = (slice(None), slice(None), slice(u, u + stride * (h_out - 1) + 1, stride),
                      slice(v, v + stride * (w_out - 1) + 1, stride))
            grad_weight[:, :, u, v] = torch.einsum("nohw,nchw->oc", grad_out, padded[window])
            grad_padded[window] += torch.einsum("nohw,oc->nchw", grad_out, weight[:, :, u, v])
    grad_x = grad_padded[:, :, padding:padding + h, padding:padding + w]
    return grad_x, grad_weight, grad_out.sum(dim=(0, 2, 3))
