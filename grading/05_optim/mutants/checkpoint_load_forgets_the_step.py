"""load_checkpoint restores model and optimizer but returns nothing: the resumed loop does not know where it was."""
# replaces: checkpoint
# caught by: test_checkpoint, test_checkpoint_hidden
def save_checkpoint(model, optimizer, step):
    return copy.deepcopy({"model": model.state_dict(), "optimizer": optimizer.state_dict(), "step": step})


def load_checkpoint(model, optimizer, checkpoint):
    model.load_state_dict(checkpoint["model"])
    optimizer.load_state_dict(checkpoint["optimizer"])
