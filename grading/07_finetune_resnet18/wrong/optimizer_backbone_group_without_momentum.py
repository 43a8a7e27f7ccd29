"""The head's group has momentum 0.9 and the backbone's group none: the groups should differ in their learning rate only."""
# exercise: make_finetune_optimizer
# message: momentum

def make_finetune_optimizer(model, learning_rate, backbone_factor=0.1):
    head = list(model.fc.parameters())
    in_head = {id(p) for p in head}
    backbone = [p for p in model.parameters() if p.requires_grad and id(p) not in in_head]
    groups = [{"params": head, "lr": learning_rate, "momentum": 0.9}]
    if backbone:
        groups.append({"params": backbone, "lr": learning_rate * backbone_factor})
    return torch.optim.SGD(groups, lr=learning_rate)
