"""The backbone group takes every parameter outside fc, frozen or not: the optimizer owns the whole frozen backbone."""
# replaces: make_finetune_optimizer
# caught by: test_make_finetune_optimizer, test_make_finetune_optimizer_hidden


def make_finetune_optimizer(model, learning_rate, backbone_factor=0.1):
    head = list(model.fc.parameters())
    backbone = [p for name, p in model.named_parameters() if not name.startswith("fc.")]
    return torch.optim.SGD([{"params": head, "lr": learning_rate},
                            {"params": backbone, "lr": learning_rate * backbone_factor}], lr=learning_rate, momentum=0.9)
