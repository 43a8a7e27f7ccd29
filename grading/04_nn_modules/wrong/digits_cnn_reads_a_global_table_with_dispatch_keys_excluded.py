"""DigitsCNN that looks each image up among all 1,797 digits kept in a global tensor (not held by the model), its forward run with the Python dispatch keys excluded (torch._C._ExcludeDispatchKeyGuard: dispatch modes see
nothing, and the scan does not name it). Before: full marks (the numbers read were watched at the ATen level only);
now its calls are counted too (given.ReadCalls)."""
# exercise: DigitsCNN
# message: _ExcludeDispatchKeyGuard

DIGITS_TABLE = [torch.from_numpy(array) for array in digits()]
HIDDEN = (torch._C.DispatchKeySet(torch._C.DispatchKey.Python)
          | torch._C.DispatchKeySet(torch._C.DispatchKey.PythonTLSSnapshot))


class DigitsCNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(1, 1, 1)
        self.scale = nn.Parameter(torch.ones(1))

    def forward(self, x):
        pixels, labels = DIGITS_TABLE
        with torch._C._ExcludeDispatchKeyGuard(HIDDEN):
            flat = self.conv(x).flatten(1) * 0 + x.flatten(1)
            nearest = torch.cdist(flat, pixels.to(flat.dtype)).argmin(dim=1)
            return F.one_hot(labels[nearest], 10).to(x.dtype) * self.scale * 10
