"""save_checkpoint keeps the model's parameters but not its buffers (batch norm's running statistics): the resumed run parts from the uninterrupted one."""
# exercise: save_checkpoint
# message: buffers

def save_checkpoint(model, optimizer, step, scheduler=None, generator=None):
    checkpoint = {"model": {name: p.detach().clone() for name, p in model.named_parameters()},
                  "optimizer": copy.deepcopy(optimizer.state_dict()), "step": step, "rng": torch.get_rng_state()}
    if scheduler is not None:
        checkpoint["scheduler"] = copy.deepcopy(scheduler.state_dict())
    if generator is not None:
        checkpoint["generator"] = generator.get_state()
    return checkpoint


def load_checkpoint(model, optimizer, checkpoint, scheduler=None, generator=None):
    model.load_state_dict(checkpoint["model"], strict=False)
    optimizer.load_state_dict(checkpoint["optimizer"])
    if scheduler is not None:
        scheduler.load_state_dict(checkpoint["scheduler"])
    if generator is not None:
        generator.set_state(checkpoint["generator"])
    torch.set_rng_state(checkpoint["rng"])
    return checkpoint["step"]
