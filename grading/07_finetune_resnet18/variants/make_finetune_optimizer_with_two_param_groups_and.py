"""make_finetune_optimizer with two param groups and no momentum: the tests check only what it holds and its rate."""
# exercise: make_finetune_optimizer

def make_finetune_optimizer(model, learning_rate):
    return torch.optim.SGD([{"params": [model.fc.bias]}, {"params": [model.fc.weight]}], lr=learning_rate)
