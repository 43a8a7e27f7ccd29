"""The checkpoint keeps the model's state_dict and the step but not the optimizer's: a resumed Adam or momentum restarts from zero."""
# replaces: checkpoint
# caught by: test_checkpoint, test_checkpoint_hidden
def save_checkpoint(model, optimizer, step):
    return {"model": copy.deepcopy(model.state_dict()), "step": step}


def load_checkpoint(model, optimizer, checkpoint):
    model.load_state_dict(checkpoint["model"])
    return checkpoint["step"]
