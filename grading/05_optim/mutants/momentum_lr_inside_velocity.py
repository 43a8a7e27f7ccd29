"""SGDMomentum folds the learning rate into the velocity (v = mu * v + lr * g; p -= v): wrong once lr changes."""
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
            for p in group["params"]:
                if p.grad is None:
                    continue
                state = self.state[p]
                if "velocity" not in state:
                    state["velocity"] = torch.zeros_like(p)
                v = state["velocity"]
                v.mul_(group["momentum"]).add_(group["lr"] * p.grad)
                p -= v
        return loss
