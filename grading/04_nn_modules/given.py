"""What the grader hands 04's answers in the kernel: models to load secret weights into, a loss to backpropagate,
models to count, the notebook's training loop, and the watches a call runs under.

Stand-ins build inputs and hand back what the student's objects give; they compute no property, no expected
value and no verdict (autograder/probes/__init__.py). Two observations here are the kernel's word, which the
grading process cannot see for itself (docs/design.md, "What the kernel still reports"): which PyTorch
functions and ATen operators a convolution ran and whether its backward asked autograd to save a tensor for a
backward pass of its own (`watched`, shared with 03 in autograder/probes/stand_ins.py), and which numbers
DigitsCNN's forward pass read besides its input (`reads`).
"""

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn
from torch.overrides import TorchFunctionMode
from torch.utils._python_dispatch import TorchDispatchMode

from autograder.probes.stand_ins import listed, watched  # noqa: F401 - the probe reaches them as k.given.*

# -- modules -------------------------------------------------------------------------------------------------

def linear_layers(model):
    """The nn.Linear layers of model, in the order of model.modules()."""
    return [m for m in model.modules() if isinstance(m, nn.Linear)]


def weights_and_biases(layers):
    """[weight, bias] of each layer (bias None where it has none)."""
    return [[layer.weight, layer.bias] for layer in layers]


def load(layers, weights, biases):
    """Copy the grader's weights and biases into the layers, as float64."""
    with torch.no_grad():
        for layer, weight, bias in zip(layers, weights, biases):
            layer.weight.copy_(torch.tensor(weight, dtype=torch.float64))
            layer.bias.copy_(torch.tensor(bias, dtype=torch.float64))


def load_parameters(model, values):
    """Copy the grader's values into the named parameters of model (name -> array), as float64."""
    with torch.no_grad():
        for name, value in values.items():
            getattr(model, name).copy_(torch.tensor(value, dtype=torch.float64))


def forward_backward(model, x, c):
    """model(x), after backpropagating sum(c * model(x)): the gradients land in x.grad and the parameters'."""
    out = model(x)
    (out * c).sum().backward()
    return out


def parameter_names(model):
    """The names of model.named_parameters(), in its order."""
    return [name for name, _ in model.named_parameters()]


def parameters(model):
    """model.parameters(), as a list."""
    return list(model.parameters())


def each(function, items):
    """function(item) for each item."""
    return [function(item) for item in items]


class Scaled(nn.Module):
    """A parameter of its own beside a submodule, and a buffer that is not a parameter."""

    def __init__(self, a, b):
        super().__init__()
        self.scale = nn.Parameter(torch.ones(a, b))
        self.inner = nn.Linear(b, a)
        self.register_buffer("running", torch.zeros(a))


def count_models(a, b, c, d, seed):
    """Models with buffers, frozen layers, a frozen bias, and parameters outside any submodule."""
    torch.manual_seed(seed)
    middle_frozen = nn.Sequential(nn.Linear(a, b), nn.Linear(b, c), nn.Linear(c, d))
    middle_frozen[1].requires_grad_(False)
    bias_frozen = nn.Sequential(nn.Linear(a, b), nn.ReLU(), nn.Linear(b, c))
    bias_frozen[2].bias.requires_grad_(False)
    conv = nn.Sequential(nn.Conv2d(a, b, 3), nn.BatchNorm2d(b), nn.ReLU())
    conv[1].requires_grad_(False)
    scaled = Scaled(a, c)
    scaled.inner.weight.requires_grad_(False)
    return [nn.Sequential(nn.Linear(a, b), nn.BatchNorm1d(b), nn.Linear(b, 1)), middle_frozen,
            nn.Linear(c, d).requires_grad_(False), bias_frozen, conv, scaled]


def mlp(weights, biases):
    """Linear, Tanh, Linear in float64 with the grader's weights."""
    model = nn.Sequential(nn.Linear(*weights[0].shape[::-1]), nn.Tanh(), nn.Linear(*weights[1].shape[::-1])).double()
    load([model[0], model[2]], weights, biases)
    return model


class Reads(TorchDispatchMode):
    """The numbers read by the ATen operators run under it that did not come from the given inputs or from what
    those operators computed: each storage once, whole (a view of a table counts the table). A dispatch mode:
    it sees what runs under torch._C.DisableTorchFunction too; ReadCalls beside it counts the same by the
    functions called, which operators run with the Python dispatch keys excluded do not hide."""

    @classmethod
    def _should_skip_dynamo(cls) -> bool:  # else the first call imports torch._dynamo: 1.4 s of CPU per kernel
        return False

    def __init__(self, *inputs):
        super().__init__()
        self.derived = {t.untyped_storage().data_ptr() for t in inputs}
        self.read = {}

    def note(self, args, kwargs) -> None:
        """Each tensor among the arguments whose storage is not derived: read, whole."""
        values = [*args, *(kwargs or {}).values()]
        for t in [v for value in values for v in (value if isinstance(value, (list, tuple)) else (value,))]:
            if isinstance(t, torch.Tensor) and t.untyped_storage().data_ptr() not in self.derived:
                storage = t.untyped_storage()
                self.read[storage.data_ptr()] = storage.nbytes() // max(t.element_size(), 1)

    def derive(self, out) -> None:
        """What an operation computed is derived."""
        for t in out if isinstance(out, (tuple, list)) else (out,):
            if isinstance(t, torch.Tensor):
                self.derived.add(t.untyped_storage().data_ptr())

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.note(args, kwargs)
        out = func(*args, **(kwargs or {}))
        self.derive(out)
        return out


class ReadCalls(TorchFunctionMode):
    """Reads' count, by the PyTorch functions and tensor methods called: a forward run with the Python dispatch
    keys excluded (torch._C._ExcludeDispatchKeyGuard) hides its operators from a dispatch mode, not its calls."""

    def __init__(self, reads):
        super().__init__()
        self.reads = reads

    def __torch_function__(self, func, types, args=(), kwargs=None):
        self.reads.note(args, kwargs)
        out = func(*args, **(kwargs or {}))
        self.reads.derive(out)
        return out


def reads(model, x):
    """model(x) without a graph, and the size of each storage its forward pass read besides x (Reads, ReadCalls)."""
    watch = Reads(x)
    with torch.no_grad(), watch, ReadCalls(watch):
        logits = model(x)
    return {"logits": logits, "reads": list(watch.read.values())}


# -- the digits CNN ------------------------------------------------------------------------------------------------

def conv_layers(model):
    """The nn.Conv2d layers of model."""
    return [m for m in model.modules() if isinstance(m, nn.Conv2d)]


def trainable(model):
    """The parameters of model that require a gradient."""
    return [p for p in model.parameters() if p.requires_grad]


def held(model):
    """The shape of every distinct tensor or NumPy array the modules of model hold: parameters, buffers
    (persistent or not) and other attributes (directly, or in a list, tuple or dict)."""
    shapes, seen = [], set()
    for module in model.modules():
        values = [*module._parameters.values(), *module._buffers.values()]
        for name, value in vars(module).items():
            if name in ("_parameters", "_buffers", "_modules"):
                continue
            values += list(value.values()) if isinstance(value, dict) else (
                list(value) if isinstance(value, (list, tuple)) else [value])
        for value in values:
            if isinstance(value, (torch.Tensor, np.ndarray)) and id(value) not in seen:
                seen.add(id(value))
                shapes.append([int(n) for n in value.shape])
    return shapes


def train_classifier(model, x, y, seed, epochs=36, batch_size=64, learning_rate=1e-2):
    """The notebook's train_classifier: Adam on the cross-entropy, shuffled mini-batches from seed."""
    x, y = torch.as_tensor(x), torch.as_tensor(y)
    order = torch.Generator().manual_seed(int(seed))
    optimizer = torch.optim.Adam(model.parameters(), lr=learning_rate)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # a small model trains fastest on one thread, and to the same numbers anywhere
    try:
        for _ in range(epochs):
            for batch in torch.randperm(len(y), generator=order).split(batch_size):
                loss = F.cross_entropy(model(x[batch]), y[batch])
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
    finally:
        torch.set_num_threads(threads)
    return model


def logits(model, x):
    """model(x) without a graph."""
    with torch.no_grad():
        return model(torch.as_tensor(x))
