"""The checkpoint keeps everything but the scheduler: the rebuilt one starts counting epochs again, and the learning rate jumps back up."""
# replaces: checkpoint
# caught by: test_checkpoint, test_checkpoint_hidden
def save_checkpoint(model, optimizer, step, scheduler=None, generator=None):
    checkpoint = {"model": model.state_dict(), "optimizer": optimizer.state_dict(), "step": step,
                  "rng": torch.get_rng_state()}
    if generator is not None:
        checkpoint["generator"] = generator.get_state()
    return copy.deepcopy(checkpoint)


def load_checkpoint(model, optimizer, checkpoint, scheduler=None, generator=None):
    model.load_state_dict(checkpoint["model"])
    optimizer.load_state_dict(checkpoint["optimizer"])
    if generator is not None:
        generator.set_state(checkpoint["generator"])
    torch.set_rng_state(checkpoint["rng"])
    return checkpoint["step"]
