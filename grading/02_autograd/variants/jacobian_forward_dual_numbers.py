"""jacobian_forward with torch.autograd.forward_ad's dual numbers, a column per input."""
# exercise: jacobian_forward
import torch.autograd.forward_ad as fwAD


def jacobian_forward(f, x):
    columns = []
    for j in range(x.shape[0]):
        tangent = torch.zeros_like(x)
        tangent[j] = 1.0
        with fwAD.dual_level():
            columns.append(fwAD.unpack_dual(f(fwAD.make_dual(x, tangent))).tangent)
    return torch.stack(columns, dim=1)
