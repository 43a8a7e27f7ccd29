"""conv2d_forward counts the padding in the output size but unfolds x without it."""
# replaces: conv2d_forward
# caught by: test_conv2d_forward, test_conv2d_forward_hidden
def conv2d_forward(x, weight, bias=None, stride=1, padding=0):
    """F.conv2d(x, weight, bias, stride=stride, padding=padding) as F.unfold and one matrix product."""
    n, _, h, w = x.shape
    c_out, _, kh, kw = weight.shape
    h_out = (h + 2 * padding - kh) // stride + 1
    w_out = (w + 2 * padding - kw) // stride + 1
    cols = F.unfold(x, (kh, kw), stride=stride)
    out = weight.reshape(c_out, -1) @ cols
    if bias is not None:
        out = out + bias.reshape(1, c_out, 1)
    return out.reshape(n, c_out, h_out, w_out)
