"""SGDMomentum rebuilds the velocity every step (a local variable, never stored in self.state): plain SGD."""
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
                velocity = torch.zeros_like(p)
                velocity = group["momentum"] * velocity + p.grad
                p -= group["lr"] * velocity
        return loss
