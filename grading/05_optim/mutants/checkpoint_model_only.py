"""The checkpoint keeps the model's state_dict and the step, as a tutorial's first version does: the optimizer, the scheduler and every random state start again."""
# replaces: checkpoint
# caught by: test_checkpoint, test_checkpoint_hidden
def save_checkpoint(model, optimizer, step, scheduler=None, generator=None):
    return {"model": copy.deepcopy(model.state_dict()), "optimizer": None, "step": step}


def load_checkpoint(model, optimizer, checkpoint, scheduler=None, generator=None):
    model.load_state_dict(checkpoint["model"])
    return checkpoint["step"]
