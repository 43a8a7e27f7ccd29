"""SGDMomentum with the velocity cloned from the first gradient, as torch does."""
# exercise: SGDMomentum

class SGDMomentum(torch.optim.Optimizer):
    def __init__(self, params, lr, momentum=0.9):
        super().__init__(params, dict(lr=lr, momentum=momentum))

    @torch.no_grad()
    def step(self, closure=None):
        for group in self.param_groups:
            for p in (q for q in group["params"] if q.grad is not None):
                buf = self.state[p].get("velocity")
                if buf is None:
                    buf = self.state[p]["velocity"] = torch.clone(p.grad).detach()
                else:
                    buf.mul_(group["momentum"]).add_(p.grad)
                p.add_(buf, alpha=-group["lr"])
