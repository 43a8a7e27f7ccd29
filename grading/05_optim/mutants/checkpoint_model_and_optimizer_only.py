"""The checkpoint keeps the model's and the optimizer's state_dicts and the step (what the notebook used to list), and nothing of the scheduler or the random states."""
# replaces: checkpoint
# caught by: test_checkpoint, test_checkpoint_hidden
def save_checkpoint(model, optimizer, step, scheduler=None, generator=None):
    return copy.deepcopy({"model": model.state_dict(), "optimizer": optimizer.state_dict(), "step": step})


def load_checkpoint(model, optimizer, checkpoint, scheduler=None, generator=None):
    model.load_state_dict(checkpoint["model"])
    optimizer.load_state_dict(checkpoint["optimizer"])
    return checkpoint["step"]
