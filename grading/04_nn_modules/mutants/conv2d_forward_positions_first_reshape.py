"""conv2d_forward multiplies cols.T @ W.T, (N, L, C_out), and reshapes it to (N, C_out, H_out, W_out) without moving the channel axis."""
# replaces: conv2d_forward
# caught by: test_conv2d_forward, test_conv2d_forward_hidden
def conv2d_forward(x, weight, bias=None, stride=1, padding=0):
    """F.conv2d(x, weight, bias, stride=stride, padding=padding) as F.unfold and one matrix product."""
    n, _, h, w = x.shape
    c_out, _, kh, kw = weight.shape
    h_out = (h + 2 * padding - kh) // stride + 1
    w_out = (w + 2 * padding - kw) // stride + 1
    cols = F.unfold(x, (kh, kw), padding=padding, stride=stride)
    out = cols.transpose(1, 2) @ weight.reshape(c_out, -1).T
    if bias is not None:
        out = out + bias
    return out.reshape(n, c_out, h_out, w_out)
