"""save_checkpoint keeps everything but the DataLoader's generator; load_checkpoint seeds it afresh instead."""
# exercise: load_checkpoint
# message: order

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
    if generator is not None:
        generator.manual_seed(0)
    torch.set_rng_state(checkpoint["rng"])
    return checkpoint["step"]
