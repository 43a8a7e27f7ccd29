"""make_finetune_optimizer by names, the head split into two groups, the backbone's rate as learning_rate / (1 / factor)."""
# exercise: make_finetune_optimizer

def make_finetune_optimizer(model, learning_rate, backbone_factor=0.1):
    groups = [{"params": [model.fc.bias], "lr": learning_rate}, {"params": [model.fc.weight], "lr": learning_rate}]
    unfrozen = [p for name, p in model.named_parameters() if p.requires_grad and name.split(".")[0] != "fc"]
    if len(unfrozen) > 0:
        groups += [dict(params=unfrozen, lr=learning_rate / (1 / backbone_factor))]
    return torch.optim.SGD(groups, lr=learning_rate, momentum=0.9)
