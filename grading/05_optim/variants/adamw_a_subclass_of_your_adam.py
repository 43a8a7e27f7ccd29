"""AdamW as a subclass of the notebook's own Adam: decay the parameters that have a gradient, then Adam's step."""
# exercise: AdamW

class AdamW(Adam):
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2):
        super().__init__(params, lr=lr, betas=betas, eps=eps)
        for group in self.param_groups:
            group.setdefault("weight_decay", weight_decay)
        self.defaults["weight_decay"] = weight_decay

    @torch.no_grad()
    def step(self, closure=None):
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is not None:
                    p.add_(p, alpha=-group["lr"] * group["weight_decay"])
        return super().step(closure)
