"""The optimizer is given model.parameters() in one group: it holds the frozen backbone, and an unfrozen layer4 at the head's rate."""
# replaces: make_finetune_optimizer
# caught by: test_make_finetune_optimizer, test_make_finetune_optimizer_hidden


def make_finetune_optimizer(model, learning_rate, backbone_factor=0.1):
    return torch.optim.SGD(model.parameters(), lr=learning_rate, momentum=0.9)
