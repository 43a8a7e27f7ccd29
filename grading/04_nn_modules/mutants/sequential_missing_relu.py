"""build_sequential without the ReLU: two Linear layers in a row collapse into one linear map."""
# replaces: build_sequential
# caught by: test_build_sequential, test_build_sequential_hidden
def build_sequential(d_in, h, d_out):
    """Linear(d_in, h) -> ReLU -> Linear(h, d_out) as an nn.Sequential; maps x: (N, d_in) to (N, d_out)."""
    return nn.Sequential(nn.Linear(d_in, h), nn.Linear(h, d_out))
