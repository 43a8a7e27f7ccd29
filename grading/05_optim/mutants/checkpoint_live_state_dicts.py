"""save_checkpoint returns the state_dicts themselves: their tensors are the live ones, so the checkpoint follows training on."""
# replaces: checkpoint
# caught by: test_checkpoint, test_checkpoint_hidden
def save_checkpoint(model, optimizer, step, scheduler=None, generator=None):
    checkpoint = {"model": model.state_dict(), "optimizer": optimizer.state_dict(), "step": step,
                  "rng": torch.get_rng_state()}
    if scheduler is not None:
        checkpoint["scheduler"] = scheduler.state_dict()
    if generator is not None:
        checkpoint["generator"] = generator.get_state()
    return checkpoint


def load_checkpoint(model, optimizer, checkpoint, scheduler=None, generator=None):
    model.load_state_dict(checkpoint["model"])
    optimizer.load_state_dict(checkpoint["optimizer"])
    if scheduler is not None:
        scheduler.load_state_dict(checkpoint["scheduler"])
    if generator is not None:
        generator.set_state(checkpoint["generator"])
    torch.set_rng_state(checkpoint["rng"])
    return checkpoint["step"]
