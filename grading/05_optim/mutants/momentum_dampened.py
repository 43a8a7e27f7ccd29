"""SGDMomentum uses the exponential-average form v = mu * v + (1 - mu) * g (from v = 0), not PyTorch's."""
# replaces: SGDMomentum
# caught by: test_SGDMomentum, test_SGDMomentum_hidden
class SGDMomentum(torch.optim.Optimizer):
    def __init__(self, params, lr, momentum=0.9):
        super().__init__(params, {"lr": lr, "momentum": momentum})

    @torch.no_grad()
    def step(self, closure=None):
        loss = None
        if closure is not None:
            with torch.enable_grad():
                loss = closure()
        for group in self.param_groups:
            mu = group["momentum"]
            for p in group["params"]:
                if p.grad is None:
                    continue
                state = self.state[p]
                if "v" not in state:
                    state["v"] = torch.zeros_like(p)
                state["v"].mul_(mu).add_(p.grad, alpha=1 - mu)
                p -= group["lr"] * state["v"]
        return loss
