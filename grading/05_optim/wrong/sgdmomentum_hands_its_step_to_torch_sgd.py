"""SGDMomentum keeps a torch.optim.SGD of its own over the same groups and calls its step."""
# exercise: SGDMomentum
# message: torch.optim's own

class SGDMomentum(torch.optim.Optimizer):
    def __init__(self, params, lr, momentum=0.9):
        super().__init__(params, {"lr": lr, "momentum": momentum})
        self.inner = torch.optim.SGD(self.param_groups, lr=lr, momentum=momentum)
        self.state = self.inner.state

    def step(self, closure=None):
        return self.inner.step(closure)
