"""The checkpoint keeps everything but the generator the DataLoader shuffles with: the resumed epochs visit the examples in another order."""
# replaces: checkpoint
# caught by: test_checkpoint, test_checkpoint_hidden
def save_checkpoint(model, optimizer, step, scheduler=None, generator=None):
    checkpoint = {"model": model.state_dict(), "optimizer": optimizer.state_dict(), "step": step,
                  "rng": torch.get_rng_state()}
    if scheduler is not None:
        checkpoint["scheduler"] = scheduler.state_dict()
    return copy.deepcopy(checkpoint)


def load_checkpoint(model, optimizer, checkpoint, scheduler=None, generator=None):
    model.load_state_dict(checkpoint["model"])
    optimizer.load_state_dict(checkpoint["optimizer"])
    if scheduler is not None:
        scheduler.load_state_dict(checkpoint["scheduler"])
    torch.set_rng_state(checkpoint["rng"])
    return checkpoint["step"]
