"""What the grader hands 07's functions in the kernel: frozen ResNet18s with weights drawn from a seed,
loaders over tiny images, a small net with a head called fc, stand-in pretrained weights.

Stand-ins build inputs and hand back what the student's objects hold (raw values: parameter names and
flags, the optimizer's groups, weights, statistics); they compute no property, no expected value and no
verdict (autograder/probes/__init__.py).
"""

from unittest import mock

import torch
import torchvision
from torch import nn
from torch.utils.data import DataLoader, TensorDataset
from torchvision.models import ResNet18_Weights

from autograder.probes.stand_ins import StandIn, floats  # noqa: F401 - the probe reaches them as k.given.*

SAMPLED = 64  # values read of each large backbone tensor, at places drawn from the grader's seed


def frozen_resnet18(seed, num_classes):
    """A random ResNet18, all frozen but its fc: the model every finetune gets."""
    torch.manual_seed(int(seed))
    model = torchvision.models.resnet18(num_classes=int(num_classes)).requires_grad_(False)
    model.fc.requires_grad_(True)
    return model


def backbone(model, seed):
    """The backbone as it is, raw: its parameters (every value of a small tensor, SAMPLED values of a large
    one at places drawn from `seed`) and its BatchNorm statistics whole, float64 rows."""
    generator = torch.Generator().manual_seed(int(seed))
    weights, statistics = [], []
    for name, tensor in model.state_dict().items():
        if name.startswith("fc."):
            continue
        values = tensor.detach().double().reshape(-1).cpu()
        is_parameter = name.endswith(("weight", "bias")) and "running" not in name
        if is_parameter and values.numel() > 4 * SAMPLED:
            values = values[torch.randint(values.numel(), (SAMPLED,), generator=generator)]
        (weights if is_parameter else statistics).append(values)
    return torch.cat(weights), torch.cat(statistics)


def named_flags(model):
    """(name, requires_grad) of every parameter, in named_parameters() order."""
    return [[name, bool(p.requires_grad)] for name, p in model.named_parameters()]


def build_with_donor(build, num_classes, donor_seed):
    """build(num_classes, weights=IMAGENET1K_V1) where the 'pretrained' weights are a random ResNet18's
    drawn from donor_seed (nothing is downloaded)."""
    torch.manual_seed(int(donor_seed))
    donor = torchvision.models.resnet18().state_dict()
    with mock.patch.object(ResNet18_Weights, "get_state_dict", lambda self, *args, **kwargs: donor):
        return build(int(num_classes), weights=ResNet18_Weights.IMAGENET1K_V1)


def logits_shape(model, batch=2, size=32):
    """The shape of model's output on a batch of zeros, in eval mode, without a graph."""
    model.eval()
    with torch.no_grad():
        return list(model(torch.zeros(batch, 3, size, size)).shape)


class HeadNet(nn.Module):
    """Not a ResNet: a frozen body with batch norm, and a head called fc."""

    def __init__(self, num_classes):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(6, 5), nn.BatchNorm1d(5), nn.ReLU())
        self.fc = nn.Linear(5, num_classes)

    def forward(self, x):
        return self.fc(self.body(x))


def head_net(seed, num_classes, draws, case):
    """HeadNet with its body frozen ("frozen"), or partly unfrozen as `draws` say ("partly", "factor")."""
    torch.manual_seed(int(seed))
    net = HeadNet(int(num_classes))
    net.body.requires_grad_(False)
    if case != "frozen":
        body = list(net.body.parameters())
        for p, draw in zip(body, draws):
            p.requires_grad_(bool(draw < 0.5))
        if not any(p.requires_grad for p in body):
            body[0].requires_grad_(True)
    return net


def groups(optimizer, net):
    """Each group of the optimizer as it is: the names of the parameters it holds (by identity with
    net's; another tensor as such), and every setting but the parameters."""
    names = {id(p): name for name, p in net.named_parameters()}
    return [[sorted(names.get(id(p), "a tensor that is not the model's") for p in group["params"]),
             {key: (value if isinstance(value, (bool, int, float, str)) or value is None else repr(value))
              for key, value in group.items() if key != "params"}]
            for group in optimizer.param_groups]


def one_step(net, optimizer, seed):
    """One optimizer step on a cross-entropy loss of random inputs, in eval mode: fc's weight before and after."""
    before = net.fc.weight.detach().clone()
    net.eval()
    generator = torch.Generator().manual_seed(int(seed))
    x = torch.randn(4, 6, generator=generator)
    nn.functional.cross_entropy(net(x), torch.arange(4) % net.fc.out_features).backward()
    optimizer.step()
    return before, net.fc.weight.detach().clone()


def loaders(x, y, n_train, batch_size, seed):
    """The training loader (shuffled from seed) and the validation loader over tiny images."""
    x, y = torch.as_tensor(x), torch.as_tensor(y)
    train = DataLoader(TensorDataset(x[:n_train], y[:n_train]), batch_size=int(batch_size), shuffle=True,
                       generator=torch.Generator().manual_seed(int(seed)))
    return train, DataLoader(TensorDataset(x[n_train:], y[n_train:]), batch_size=5)


def notebook_optimizer(model, learning_rate):
    """The notebook's optimizer for finetune: SGD over fc with momentum 0.9 (a mistake in the student's
    make_finetune_optimizer is judged once, in its own exercise)."""
    return torch.optim.SGD(model.fc.parameters(), lr=learning_rate, momentum=0.9)


