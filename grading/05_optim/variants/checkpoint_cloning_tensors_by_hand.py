"""save_checkpoint clones every tensor of the model's state_dict by hand, deep-copies the rest, keeps the random states under one key; load with strict=True."""
# exercise: load_checkpoint

def save_checkpoint(model, optimizer, step, scheduler=None, generator=None):
    randomness = {"torch": torch.random.get_rng_state().clone(),
                  "loader": None if generator is None else generator.get_state().clone()}
    return dict(step=step, model={k: v.detach().clone() for k, v in model.state_dict().items()},
                optimizer=copy.deepcopy(optimizer.state_dict()), randomness=randomness,
                schedule=None if scheduler is None else copy.deepcopy(scheduler.state_dict()))


def load_checkpoint(model, optimizer, checkpoint, scheduler=None, generator=None):
    model.load_state_dict(checkpoint["model"], strict=True)
    optimizer.load_state_dict(checkpoint["optimizer"])
    if scheduler is not None and checkpoint["schedule"] is not None:
        scheduler.load_state_dict(checkpoint["schedule"])
    torch.random.set_rng_state(checkpoint["randomness"]["torch"])
    if generator is not None:
        generator.set_state(checkpoint["randomness"]["loader"])
    step = checkpoint["step"]
    return step
