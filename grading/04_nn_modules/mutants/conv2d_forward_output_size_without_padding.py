"""conv2d_forward unfolds the padded image but leaves the padding out of the output size it reshapes to."""
# replaces: conv2d_forward
# caught by: test_conv2d_forward, test_conv2d_forward_hidden


def conv2d_forward(x, weight, bias=None, stride=1, padding=0):
    """F.conv2d(x, weight, bias, stride=stride, padding=padding) as F.unfold and one matrix product.

    x: (N, C_in, H, W); weight: (C_out, C_in, kH, kW); bias: (C_out,) or None.
    Returns (N, C_out, H_out, W_out).
    """
    n, _, h, w = x.shape
    c_out, _, kh, kw = weight.shape
    h_out = (h - kh) // stride + 1
    w_out = (w - kw) // stride + 1
    cols = F.unfold(x, (kh, kw), padding=padding, stride=stride)  # (N, C_in*kH*kW, L)
    out = weight.reshape(c_out, -1) @ cols  # (N, C_out, L)
    if bias is not None:
        out = out + bias.reshape(1, c_out, 1)
    return out.reshape(n, c_out, h_out, w_out)
