"""Every parameter that requires grad in one group at learning_rate: an unfrozen layer4 moves as fast as the new head."""
# replaces: make_finetune_optimizer
# caught by: test_make_finetune_optimizer, test_make_finetune_optimizer_hidden


def make_finetune_optimizer(model, learning_rate, backbone_factor=0.1):
    return torch.optim.SGD([p for p in model.parameters() if p.requires_grad], lr=learning_rate, momentum=0.9)
