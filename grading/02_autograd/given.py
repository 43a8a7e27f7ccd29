"""What the grader hands 02's functions in the kernel: graphs, functions to differentiate, tensors to convert.

Stand-ins build inputs and hand back what the student's objects give; they compute no property, no
expected value and no verdict (autograder/probes/__init__.py).
"""

import torch

from autograder.probes.stand_ins import listed, type_names  # noqa: F401 - the probe reaches them as k.given.*


class SizeWatch(torch.Tensor):
    """A tensor that notes, in SizeWatch.largest, the number of elements of the largest tensor any operation on it
    makes (the kernel's word on how much memory an answer asked for: the probe's docstring says what a forger gains)."""

    largest = [0]

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        result = super().__torch_function__(func, types, args, kwargs or {})
        for t in result if isinstance(result, (tuple, list)) else [result]:
            if isinstance(t, torch.Tensor):
                SizeWatch.largest[0] = max(SizeWatch.largest[0], t.numel())
        return result


def watched(*tensors):
    """The tensors as SizeWatch tensors, the count started again."""
    SizeWatch.largest[0] = 0
    return [t.as_subclass(SizeWatch) for t in tensors]


def largest():
    """The number of elements of the largest tensor made since `watched`."""
    return SizeWatch.largest[0]


def plain(t):
    """A SizeWatch tensor (or any) as a plain tensor."""
    return t.as_subclass(torch.Tensor)


def gradients(out, weights, inputs):
    """The gradients of sum(weights * out) with respect to inputs, as a list (what the student's result hands back)."""
    return list(torch.autograd.grad((out * weights).sum(), inputs))


def graphs(values, codes, picks) -> dict:
    """name -> tensor: random chains of operations that reuse earlier results, and a few fixed shapes
    that a walk without a visited set, or along first inputs only, gets wrong."""
    unary = (torch.exp, torch.tanh, torch.sin, torch.relu, torch.sigmoid, torch.abs, lambda t: t * 2, lambda t: -t)
    binary = (torch.add, torch.mul, torch.sub, torch.maximum)
    values = torch.tensor(values)  # (leaves, m)
    made = {}
    for g, (codes_g, picks_g) in enumerate(zip(codes, picks)):
        nodes = [values[i].clone().requires_grad_(i < 3) for i in range(values.shape[0])]  # 3 weights, data
        current = nodes[0]
        for code, pick in zip(codes_g.tolist(), picks_g.tolist()):
            other = nodes[pick % len(nodes)]  # any earlier tensor: leaves and results are reused
            if code % 2:
                current = binary[code // 2 % len(binary)](current, other)
            else:
                current = unary[code // 2 % len(unary)](current)
            nodes.append(current)
        made[f"random{g}"] = (current * nodes[int(picks_g[-1]) % len(nodes)]).sum() if g % 2 else current.mean()
    w = values[0].clone().requires_grad_(True)
    z = w * values[1] + values[2]
    made["diamond"] = (z * z + z.sin()).sum()
    made["leaf used three times"] = (w * w * w).sum() + w.sum()
    made["branch on the second input"] = (values[3] * torch.tanh(w)).sum()
    made["a leaf"] = w
    with torch.no_grad():
        made["made under no_grad"] = w * 2
    made["data only"] = values[1].exp().sum()
    return made


class GpuLike(torch.Tensor):
    """A CPU tensor that converts to NumPy only as a CUDA tensor does: after .cpu() or .to('cpu'), or
    through numpy(force=True), which copies to the host itself."""

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if func is torch.Tensor.numpy and (kwargs.get("force") or any(a is True for a in args[1:])):
            return args[0].as_subclass(torch.Tensor).numpy(force=True)
        if func in (torch.Tensor.numpy, torch.Tensor.__array__):
            raise TypeError("can't convert cuda:0 device type tensor to numpy. Use Tensor.cpu() to copy the "
                            "tensor to host memory first (a stand-in for a GPU tensor: call .cpu())")
        result = super().__torch_function__(func, types, args, kwargs)
        to_cpu = func is torch.Tensor.cpu or (
            func is torch.Tensor.to and any(str(a) == "cpu" for a in [*args[1:], *kwargs.values()]))
        return result.as_subclass(torch.Tensor) if to_cpu and isinstance(result, torch.Tensor) else result


def to_numpy_cases(f64, f32, i64) -> dict:
    """A stand-in GPU tensor, a leaf that requires grad, float32, int64 and a 0-d tensor."""
    leaf = torch.tensor(f64, requires_grad=True)
    return {"gpu": (leaf * 3).as_subclass(GpuLike), "leaf": leaf,
            "float32": torch.tensor(f32, requires_grad=True) * 2,
            "int64": torch.tensor(i64), "scalar": (leaf ** 2).sum()}


def tanh_layer(a, scale):
    """f(t) = tanh(t @ a) * scale, a batch (k, n) -> (k, m)."""
    a = torch.tensor(a)
    return lambda t: torch.tanh(t @ a) * scale


class ForwardModeOnly(torch.autograd.Function):
    """tanh(x @ a), differentiable in forward mode only: its backward raises."""

    generate_vmap_rule = True

    @staticmethod
    def forward(x, a):
        return torch.tanh(x @ a)

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_forward(inputs[1], output)

    @staticmethod
    def jvp(ctx, x_tangent, a_tangent):
        a, y = ctx.saved_tensors
        return (1 - y ** 2) * (x_tangent @ a)

    @staticmethod
    def backward(ctx, grad_y):
        raise RuntimeError("reverse mode is switched off here: build the Jacobian from Jacobian-vector products")


class ReverseModeOnly(torch.autograd.Function):
    """tanh(x @ a), differentiable in reverse mode only: it has no jvp."""

    generate_vmap_rule = True

    @staticmethod
    def forward(x, a):
        return torch.tanh(x @ a)

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(inputs[1], output)

    @staticmethod
    def backward(ctx, grad_y):
        a, y = ctx.saved_tensors
        return (grad_y * (1 - y ** 2)) @ a.T, None


def only_mode(mode, a):
    """x -> tanh(x @ a), differentiable in one mode only ("forward" or "reverse")."""
    function = {"forward": ForwardModeOnly, "reverse": ReverseModeOnly}[mode]
    a = torch.tensor(a)
    return lambda t: function.apply(t, a)
