"""build_sequential from an OrderedDict, with ReLU(inplace=True)."""
# exercise: build_sequential

from collections import OrderedDict
def build_sequential(d_in, h, d_out):
    return nn.Sequential(OrderedDict(first=nn.Linear(d_in, h), act=nn.ReLU(inplace=True), last=nn.Linear(h, d_out)))
