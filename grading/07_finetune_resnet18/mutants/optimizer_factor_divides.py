"""The backbone's rate is learning_rate / backbone_factor: ten times the head's rate instead of a tenth."""
# replaces: make_finetune_optimizer
# caught by: test_make_finetune_optimizer, test_make_finetune_optimizer_hidden


def make_finetune_optimizer(model, learning_rate, backbone_factor=0.1):
    head = list(model.fc.parameters())
    backbone = [p for name, p in model.named_parameters() if p.requires_grad and not name.startswith("fc.")]
    groups = [{"params": head, "lr": learning_rate}]
    if backbone:
        groups.append({"params": backbone, "lr": learning_rate / backbone_factor})
    return torch.optim.SGD(groups, lr=learning_rate, momentum=0.9)
