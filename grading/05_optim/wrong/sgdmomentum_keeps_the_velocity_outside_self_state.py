"""SGDMomentum keeps the velocity outside self.state: lost by state_dict()."""
# exercise: SGDMomentum
# message: state_dict

class SGDMomentum(torch.optim.Optimizer):
    def __init__(self, params, lr, momentum=0.9):
        super().__init__(params, {"lr": lr, "momentum": momentum})
        self.velocity = {}

    @torch.no_grad()
    def step(self, closure=None):
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    continue
                self.state[p]["seen"] = True
                if p in self.velocity:
                    self.velocity[p].mul_(group["momentum"]).add_(p.grad)
                else:
                    self.velocity[p] = p.grad.clone()
                p -= group["lr"] * self.velocity[p]
