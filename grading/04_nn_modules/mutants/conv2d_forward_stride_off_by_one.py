"""conv2d_forward's output size (H + 2p - k + 1) // stride: right for stride 1, one short for larger strides."""
# replaces: conv2d_forward
# caught by: test_conv2d_forward, test_conv2d_forward_hidden
def conv2d_forward(x, weight, bias=None, stride=1, padding=0):
    """F.conv2d(x, weight, bias, stride=stride, padding=padding) as F.unfold and one matrix product."""
    n, _, h, w = x.shape
    c_out, _, kh, kw = weight.shape
    h_out = (h + 2 * padding - kh + 1) // stride
    w_out = (w + 2 * padding - kw + 1) // stride
    cols = F.unfold(x, (kh, kw), padding=padding, stride=stride)
    out = weight.reshape(c_out, -1) @ cols
    if bias is not None:
        out = out + bias.reshape(1, c_out, 1)
    return out.reshape(n, c_out, h_out, w_out)
