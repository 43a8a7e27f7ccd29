"""save_checkpoint copies the model's state_dict but not the optimizer's, whose momentum or Adam tensors are the live ones."""
# replaces: checkpoint
# caught by: test_checkpoint
def save_checkpoint(model, optimizer, step):
    return {"model": copy.deepcopy(model.state_dict()), "optimizer": optimizer.state_dict(), "step": step}


def load_checkpoint(model, optimizer, checkpoint):
    model.load_state_dict(checkpoint["model"])
    optimizer.load_state_dict(checkpoint["optimizer"])
    return checkpoint["step"]
