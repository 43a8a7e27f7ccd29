"""The optimizer is given model.parameters(): it holds the whole frozen backbone, not fc only."""
# replaces: make_finetune_optimizer
# caught by: test_make_finetune_optimizer, test_make_finetune_optimizer_hidden


def make_finetune_optimizer(model, learning_rate):
    return torch.optim.SGD(model.parameters(), lr=learning_rate, momentum=0.9)
